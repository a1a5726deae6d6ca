package testutil

import (
	"testing"
)

func TestEndToEndSkipsWithoutTheSwitch(t *testing.T) {
	t.Setenv(EndToEndEnv, "")
	ran := false
	t.Run("inner", func(t *testing.T) {
		EndToEnd(t)
		ran = true
	})
	if ran {
		t.Fatal("EndToEnd did not skip with the switch unset")
	}
}

func TestEndToEndRunsWithTheSwitch(t *testing.T) {
	t.Setenv(EndToEndEnv, "1")
	ran := false
	t.Run("inner", func(t *testing.T) {
		EndToEnd(t)
		ran = true
	})
	if !ran {
		t.Fatal("EndToEnd skipped with the switch set")
	}
}
