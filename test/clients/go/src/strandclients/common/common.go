// Package common is what the client programs share: the command line, the messages they produce
// and the JSON summary line each prints for test/e2e/go_clients.test.ts.
//
//	produce <bootstrap> <topic> <from> <count> [extra...]
//	consume <bootstrap> <topic> <group> <expect> [extra...]
package common

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
)

// Key and Value of the i-th message: k<i>, v<i>.
func Key(i int) []byte   { return []byte("k" + strconv.Itoa(i)) }
func Value(i int) []byte { return []byte("v" + strconv.Itoa(i)) }

// Print writes the summary as one JSON line.
func Print(summary map[string]interface{}) {
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
}

// Fail prints the summary with err and exits 1.
func Fail(summary map[string]interface{}, err error) {
	summary["ok"] = false
	summary["errors"] = []string{err.Error()}
	Print(summary)
	os.Exit(1)
}

// Produced prints a producer's summary: how many were acknowledged, and the errors.
func Produced(summary map[string]interface{}, sent int, errs []string) {
	if errs == nil {
		errs = []string{}
	}
	summary["sent"] = sent
	summary["errors"] = errs
	summary["ok"] = len(errs) == 0
	Print(summary)
}

// Consumed prints a consumer's summary: how many messages arrived, how many distinct, a SHA-256
// of the sorted "key\tvalue\n" lines (the test recomputes it from what was sent), the
// partitions they came from, and the errors.
func Consumed(summary map[string]interface{}, lines []string, partitions map[int]bool, errs []string) {
	sorted := append([]string(nil), lines...)
	sort.Strings(sorted)
	distinct := map[string]bool{}
	sum := sha256.New()
	for _, l := range sorted {
		distinct[l] = true
		sum.Write([]byte(l + "\n"))
	}
	parts := []int{}
	for p := range partitions {
		parts = append(parts, p)
	}
	sort.Ints(parts)
	if errs == nil {
		errs = []string{}
	}
	summary["received"] = len(lines)
	summary["distinct"] = len(distinct)
	summary["sha256"] = hex.EncodeToString(sum.Sum(nil))
	summary["partitions"] = parts
	summary["errors"] = errs
	summary["ok"] = len(errs) == 0
	Print(summary)
}

// Main parses the command line (extra: how many arguments follow the fixed ones) and runs one mode.
func Main(extra int, produce func(bootstrap, topic string, from, count int, extra []string), consume func(bootstrap, topic, group string, expect int, extra []string)) {
	a := os.Args[1:]
	if len(a) != 5+extra || (a[0] != "produce" && a[0] != "consume") {
		fmt.Fprintln(os.Stderr, "usage: produce <bootstrap> <topic> <from> <count> | consume <bootstrap> <topic> <group> <expect>, then", extra, "more")
		os.Exit(2)
	}
	n, err := strconv.Atoi(a[4])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if a[0] == "produce" {
		from, err := strconv.Atoi(a[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		produce(a[1], a[2], from, n, a[5:])
	} else {
		consume(a[1], a[2], a[3], n, a[5:])
	}
}
