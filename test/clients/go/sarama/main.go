// sarama (Debian golang-github-shopify-sarama-dev 1.22.1) against strand, driven by
// test/e2e/go_clients.test.ts. Built offline in GOPATH mode.
//
//	produce <bootstrap> <topic> <from> <count> <kafka-version>
//	consume <bootstrap> <topic> <group> <expect> <kafka-version>
//
// produce sends keys k<i> with values v<i> (i in [from, from+count)), acks=all, and waits for
// every acknowledgement. consume joins the group, reads until expect messages arrived, marks
// each one, and closes (which commits what was marked). Each prints one JSON summary line.
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
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

func fail(summary map[string]interface{}, err error) {
	summary["ok"] = false
	summary["errors"] = []string{err.Error()}
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
	os.Exit(1)
}

func config(version string) *sarama.Config {
	c := sarama.NewConfig()
	v, err := sarama.ParseKafkaVersion(version)
	if err != nil {
		fail(map[string]interface{}{"client": "sarama"}, err)
	}
	c.Version = v
	c.ClientID = "strand-go-sarama"
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = true
	c.Producer.Partitioner = sarama.NewHashPartitioner
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Offsets.CommitInterval = 200 * time.Millisecond
	c.Consumer.Return.Errors = true
	return c
}

func produce(bootstrap, topic string, from, count int, version string) {
	summary := map[string]interface{}{"client": "sarama", "mode": "produce"}
	p, err := sarama.NewSyncProducer([]string{bootstrap}, config(version))
	if err != nil {
		fail(summary, err)
	}
	msgs := make([]*sarama.ProducerMessage, 0, count)
	for i := from; i < from+count; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k" + strconv.Itoa(i)), Value: sarama.StringEncoder("v" + strconv.Itoa(i))})
	}
	if err := p.SendMessages(msgs); err != nil {
		fail(summary, err)
	}
	if err := p.Close(); err != nil {
		fail(summary, err)
	}
	summary["sent"] = count
	summary["ok"] = true
	summary["errors"] = []string{}
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
}

type handler struct {
	mu      sync.Mutex
	lines   []string
	expect  int
	done    chan struct{}
	once    sync.Once
	claimed map[int32]bool
}

func (h *handler) Setup(s sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	for _, p := range s.Claims()[topicName] {
		h.claimed[p] = true
	}
	h.mu.Unlock()
	return nil
}
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.mu.Lock()
		h.lines = append(h.lines, string(m.Key)+"\t"+string(m.Value))
		n := len(h.lines)
		h.mu.Unlock()
		s.MarkMessage(m, "")
		if n >= h.expect {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

var topicName string

func consume(bootstrap, topic, group string, expect int, version string) {
	summary := map[string]interface{}{"client": "sarama", "mode": "consume"}
	topicName = topic
	g, err := sarama.NewConsumerGroup([]string{bootstrap}, group, config(version))
	if err != nil {
		fail(summary, err)
	}
	var errs []string
	go func() {
		for e := range g.Errors() {
			errs = append(errs, e.Error())
		}
	}()
	h := &handler{expect: expect, done: make(chan struct{}), claimed: map[int32]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{topic}, h); err != nil && ctx.Err() == nil {
				errs = append(errs, err.Error())
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
		errs = append(errs, "timed out waiting for messages")
	}
	// Past the commit interval, so the marks are committed while the session still runs.
	time.Sleep(600 * time.Millisecond)
	cancel()
	if err := g.Close(); err != nil {
		errs = append(errs, err.Error())
	}
	report(summary, h.lines, errs, h.claimed)
}

// report prints how many arrived and a SHA-256 of the sorted "key\tvalue\n" lines.
func report(summary map[string]interface{}, lines []string, errs []string, claimed map[int32]bool) {
	sorted := append([]string(nil), lines...)
	sort.Strings(sorted)
	distinct := map[string]bool{}
	sum := sha256.New()
	for _, l := range sorted {
		distinct[l] = true
		sum.Write([]byte(l + "\n"))
	}
	parts := []int{}
	for p := range claimed {
		parts = append(parts, int(p))
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
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
}

func main() {
	a := os.Args[1:]
	if len(a) != 6 {
		fmt.Fprintln(os.Stderr, "usage: produce <bootstrap> <topic> <from> <count> <version> | consume <bootstrap> <topic> <group> <expect> <version>")
		os.Exit(2)
	}
	switch a[0] {
	case "produce":
		from, _ := strconv.Atoi(a[3])
		count, _ := strconv.Atoi(a[4])
		produce(a[1], a[2], from, count, a[5])
	case "consume":
		expect, _ := strconv.Atoi(a[4])
		consume(a[1], a[2], a[3], expect, a[5])
	default:
		os.Exit(2)
	}
}
