// confluent-kafka-go (Debian golang-github-confluentinc-confluent-kafka-go-dev 0.11.6, cgo over
// the system's librdkafka 2.0.2) against strand, driven by test/e2e/go_clients.test.ts. Built
// offline in GOPATH mode.
//
//	produce <bootstrap> <topic> <from> <count>
//	consume <bootstrap> <topic> <group> <expect>
//
// produce sends keys k<i> with values v<i> and a header h=<i> (i in [from, from+count)), acks=all,
// and waits for every delivery report. consume subscribes in the group (auto commit off), reads
// until expect messages arrived, checks each header, commits synchronously, and closes. Each
// prints one JSON summary line.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/kafka"
)

func print(summary map[string]interface{}) {
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
}

func produce(bootstrap, topic string, from, count int) {
	summary := map[string]interface{}{"client": "confluent-kafka-go", "mode": "produce"}
	errs := []string{}
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "acks": "all", "client.id": "strand-go-confluent", "linger.ms": 5})
	if err != nil {
		summary["errors"] = []string{err.Error()}
		print(summary)
		os.Exit(1)
	}
	delivered := make(chan *kafka.Message, count)
	for i := from; i < from+count; i++ {
		msg := &kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key:            []byte("k" + strconv.Itoa(i)),
			Value:          []byte("v" + strconv.Itoa(i)),
			Headers:        []kafka.Header{{Key: "h", Value: []byte(strconv.Itoa(i))}},
		}
		for {
			err := p.Produce(msg, nil)
			if err == nil {
				break
			}
			if e, ok := err.(kafka.Error); ok && e.Code() == kafka.ErrQueueFull {
				p.Flush(100)
				continue
			}
			errs = append(errs, err.Error())
			break
		}
	}
	go func() {
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *kafka.Message:
				delivered <- e
			case kafka.Error:
				errs = append(errs, e.Error())
			}
		}
	}()
	acked := 0
	timeout := time.After(60 * time.Second)
loop:
	for acked < count {
		select {
		case m := <-delivered:
			if m.TopicPartition.Error != nil {
				errs = append(errs, m.TopicPartition.Error.Error())
			} else {
				acked++
			}
		case <-timeout:
			errs = append(errs, "timed out waiting for delivery reports")
			break loop
		}
	}
	p.Close()
	summary["sent"] = acked
	summary["errors"] = errs
	summary["ok"] = len(errs) == 0
	print(summary)
}

func consume(bootstrap, topic, group string, expect int) {
	summary := map[string]interface{}{"client": "confluent-kafka-go", "mode": "consume"}
	errs := []string{}
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers":  bootstrap,
		"group.id":           group,
		"client.id":          "strand-go-confluent",
		"enable.auto.commit": false,
		"auto.offset.reset":  "earliest",
		"session.timeout.ms": 10000,
	})
	if err != nil {
		summary["errors"] = []string{err.Error()}
		print(summary)
		os.Exit(1)
	}
	if err := c.SubscribeTopics([]string{topic}, nil); err != nil {
		errs = append(errs, err.Error())
	}
	lines := []string{}
	partitions := map[int]bool{}
	badHeaders := 0
	deadline := time.Now().Add(60 * time.Second)
	for len(lines) < expect && time.Now().Before(deadline) {
		m, err := c.ReadMessage(500 * time.Millisecond)
		if err != nil {
			if e, ok := err.(kafka.Error); ok && e.Code() == kafka.ErrTimedOut {
				continue
			}
			errs = append(errs, err.Error())
			continue
		}
		lines = append(lines, string(m.Key)+"\t"+string(m.Value))
		partitions[int(m.TopicPartition.Partition)] = true
		if len(m.Headers) != 1 || m.Headers[0].Key != "h" || "v"+string(m.Headers[0].Value) != string(m.Value) {
			badHeaders++
		}
	}
	if len(lines) < expect {
		errs = append(errs, "timed out waiting for messages")
	}
	committed, err := c.Commit()
	if err != nil {
		errs = append(errs, "commit: "+err.Error())
	}
	commits := []string{}
	for _, tp := range committed {
		commits = append(commits, fmt.Sprintf("%d:%d", tp.Partition, int64(tp.Offset)))
	}
	sort.Strings(commits)
	if err := c.Close(); err != nil {
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
	summary["bad_headers"] = badHeaders
	summary["committed"] = strings.Join(commits, ",")
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
