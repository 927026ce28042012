// Package svc holds the few lines every zoo service starts with: where to listen and where
// its dependencies are, read the way services usually read them (a flag, the environment).
package svc

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
)

// Listen parses the -addr flag (default 127.0.0.1:0), listens there and prints
// "listening on http://HOST:PORT" on stdout, the line the zoo's test waits for.
func Listen() net.Listener {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	return ln
}

// Env returns the environment variable name, or exits naming it when it is not set.
func Env(name string) string {
	v := os.Getenv(name)
	if v == "" {
		log.Fatalf("%s is not set", name)
	}
	return v
}
