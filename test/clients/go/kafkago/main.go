// segmentio/kafka-go (Debian golang-github-segmentio-kafka-go-dev 0.2.1) against strand, driven
// by test/e2e/go_clients.test.ts. Built offline in GOPATH mode. kafka-go 0.2.1 speaks fixed old
// versions, without asking ApiVersions: Produce v2 (magic 1 message sets), Fetch v2, ListOffsets
// v1, JoinGroup v1, SyncGroup v0, OffsetCommit v2, OffsetFetch v1.
//
//	produce <bootstrap> <topic> <from> <count>
//	consume <bootstrap> <topic> <group> <expect>
//
// produce sends keys k<i> with values v<i> (i in [from, from+count)), hash-partitioned, acks=all.
// consume joins the group, reads until expect messages arrived, commits each one synchronously
// (CommitInterval 0) and closes (LeaveGroup). Each prints one JSON summary line.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func print(summary map[string]interface{}) {
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
}

func produce(bootstrap, topic string, from, count int) {
	summary := map[string]interface{}{"client": "kafka-go", "mode": "produce", "errors": []string{}}
	w := kafka.NewWriter(kafka.WriterConfig{
		Brokers:      []string{bootstrap},
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		BatchSize:    500,
		BatchTimeout: 50 * time.Millisecond,
		RequiredAcks: -1,
	})
	msgs := make([]kafka.Message, 0, count)
	for i := from; i < from+count; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte("k" + strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := w.WriteMessages(ctx, msgs...)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		summary["errors"] = []string{err.Error()}
		summary["ok"] = false
		print(summary)
		os.Exit(1)
	}
	summary["sent"] = count
	summary["ok"] = true
	print(summary)
}

func consume(bootstrap, topic, group string, expect int) {
	summary := map[string]interface{}{"client": "kafka-go", "mode": "consume"}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{bootstrap},
		GroupID:           group,
		Topic:             topic,
		MinBytes:          1,
		MaxBytes:          1 << 20,
		MaxWait:           200 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout:    10 * time.Second,
	})
	errs := []string{}
	lines := []string{}
	partitions := map[int]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(lines) < expect {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			errs = append(errs, "fetch: "+err.Error())
			break
		}
		lines = append(lines, string(m.Key)+"\t"+string(m.Value))
		partitions[m.Partition] = true
		if err := r.CommitMessages(ctx, m); err != nil {
			errs = append(errs, "commit: "+err.Error())
			break
		}
	}
	if err := r.Close(); err != nil {
		errs = append(errs, "close: "+err.Error())
	}
	sort.Strings(lines)
	distinct := map[string]bool{}
	sum := sha256.New()
	for _, l := range lines {
		distinct[l] = true
		sum.Write([]byte(l + "\n"))
	}
	parts := []int{}
	for p := range partitions {
		parts = append(parts, p)
	}
	sort.Ints(parts)
	summary["received"] = len(lines)
	summary["distinct"] = len(distinct)
	summary["sha256"] = hex.EncodeToString(sum.Sum(nil))
	summary["partitions"] = parts
	summary["errors"] = errs
	summary["ok"] = len(errs) == 0
	print(summary)
}

func main() {
	a := os.Args[1:]
	if len(a) != 5 {
		fmt.Fprintln(os.Stderr, "usage: produce <bootstrap> <topic> <from> <count> | consume <bootstrap> <topic> <group> <expect>")
		os.Exit(2)
	}
	switch a[0] {
	case "produce":
		from, _ := strconv.Atoi(a[3])
		count, _ := strconv.Atoi(a[4])
		produce(a[1], a[2], from, count)
	case "consume":
		expect, _ := strconv.Atoi(a[4])
		consume(a[1], a[2], a[3], expect)
	default:
		os.Exit(2)
	}
}
