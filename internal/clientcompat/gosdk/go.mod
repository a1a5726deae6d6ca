module mockgateway/internal/clientcompat/gosdk

go 1.26

require (
	github.com/sashabaranov/go-openai v1.43.0
	github.com/tmc/langchaingo v0.1.14
)

require (
	github.com/dlclark/regexp2 v1.10.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/pkoukk/tiktoken-go v0.1.6 // indirect
)
