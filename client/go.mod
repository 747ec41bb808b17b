module github.com/queuectl/queuectl/client

go 1.24.0
