// Go client of the differential resolver test (test/resolver/differential.test.ts).
// Built with CGO_ENABLED=0 and run with GODEBUG=netdns=go, so the lookup is Go's own resolver
// (net/dnsclient_unix.go), reading /etc/resolv.conf, /etc/nsswitch.conf and /etc/hosts of the
// mount namespace it runs in. Standard library only: it builds with GOPROXY=off.
//
//	lookup-go [-4] NAME
//
// Without -4: net.DefaultResolver.LookupIPAddr (A and AAAA per candidate, concurrently).
// With -4: net.DefaultResolver.LookupIP(ctx, "ip4", NAME) (A only).
// Prints one line:
//
//	OK ADDR...                                   every address, as returned
//	ERR notfound=BOOL temporary=BOOL timeout=BOOL MESSAGE
//
// Exit status 0 on success, 2 on a lookup error, 1 on a usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	args := os.Args[1:]
	ip4 := false
	if len(args) > 0 && args[0] == "-4" {
		ip4 = true
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: lookup-go [-4] NAME")
		os.Exit(1)
	}
	r := &net.Resolver{PreferGo: true}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var addrs []string
	var err error
	if ip4 {
		var ips []net.IP
		ips, err = r.LookupIP(ctx, "ip4", args[0])
		for _, ip := range ips {
			addrs = append(addrs, ip.String())
		}
	} else {
		var ias []net.IPAddr
		ias, err = r.LookupIPAddr(ctx, args[0])
		for _, ia := range ias {
			addrs = append(addrs, ia.IP.String())
		}
	}
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) {
			fmt.Printf("ERR notfound=%t temporary=%t timeout=%t %s\n", de.IsNotFound, de.IsTemporary, de.IsTimeout, de.Err)
		} else {
			fmt.Printf("ERR notfound=false temporary=false timeout=false %s\n", err)
		}
		os.Exit(2)
	}
	fmt.Print("OK")
	for _, a := range addrs {
		fmt.Print(" ", a)
	}
	fmt.Println()
}
