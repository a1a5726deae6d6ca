package testutil

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a redis-server the test started: on a free port, in a temporary directory,
// without persistence, with a password (so that the tests can look for it where it must not be).
type RedisServer struct {
	t        testing.TB
	Port     int
	dir      string
	Password string
	cmd      *exec.Cmd
}

// StartRedis starts Debian's redis-server for an end-to-end test (it calls EndToEnd); the test
// fails when there is none (make deps installs it). It stops when the test ends.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	EndToEnd(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is missing: make deps installs Debian's redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s := &RedisServer{t: t, Port: port, dir: t.TempDir(), Password: "redis-pw-canary-7f3a"}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start starts the server again after Stop, on the same port, empty.
func (s *RedisServer) Start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--save", "", "--appendonly", "no", "--requirepass", s.Password, "--loglevel", "warning")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	c := s.Client()
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c.Ping(context.Background()).Err() == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatal("redis-server did not answer within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop ends the server (SIGINT; without persistence it keeps nothing).
func (s *RedisServer) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// URL is the --state-store URL, password included.
func (s *RedisServer) URL() string {
	return fmt.Sprintf("redis://:%s@127.0.0.1:%d/0", s.Password, s.Port)
}

// Client is a client of the server, for a test to read what the store holds.
func (s *RedisServer) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(s.Port), Password: s.Password, MaxRetries: -1})
}

// Dump reads every key of the store and every value in it, as text: what a canary search reads.
func (s *RedisServer) Dump(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	c := s.Client()
	defer c.Close()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, k := range keys {
		typ, _ := c.Type(ctx, k).Result()
		var v any
		switch typ {
		case "string":
			v, err = c.Get(ctx, k).Result()
		case "list":
			v, err = c.LRange(ctx, k, 0, -1).Result()
		case "set":
			v, err = c.SMembers(ctx, k).Result()
		case "hash":
			v, err = c.HGetAll(ctx, k).Result()
		case "zset":
			v, err = c.ZRangeWithScores(ctx, k, 0, -1).Result()
		default:
			t.Fatalf("key %s of type %s: the dump does not read it", k, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s (%s): %v\n", k, typ, v)
	}
	return out
}
