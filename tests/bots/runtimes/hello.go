// A hello-world protocol bot in Go (the runtime starts its own threads and GC).
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		return
	}
	done := make(chan string)
	go func() { done <- "hello-go" }()
	fmt.Printf("{\"name\": %q}\n", <-done)
	for {
		line, err := in.ReadString('\n')
		if err != nil || strings.Contains(line, "\"end\"") {
			return
		}
		fmt.Println(`{"real_move": "rock"}`)
	}
}
