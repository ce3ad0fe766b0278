// sarama (Debian golang-github-shopify-sarama-dev 1.22.1) against strand, for
// test/e2e/go_clients.test.ts; command line and summary in ../common. The extra argument is the
// Kafka version sarama speaks (it does not negotiate: the version picks every request's),
// optionally followed by ":<codec>" for the producer's compression.
//
// produce sends k<i>/v<i> with a SyncProducer, hash-partitioned, acks=all. consume joins the
// group with a ConsumerGroup, reads until expect messages arrived, marks each one, lets the
// commit interval pass and closes (which commits what was marked).
//
//	pair <bootstrap> <topic> <group> <count> <version>
//
// starts two ConsumerGroup members, waits until the group has split the topic's partitions
// between them, produces count messages, reads until all arrived and closes both; the summary
// adds each member's partitions.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Shopify/sarama"

	"strandclients/common"
)

var codecs = map[string]sarama.CompressionCodec{
	"none":   sarama.CompressionNone,
	"gzip":   sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy,
	"lz4":    sarama.CompressionLZ4,
	"zstd":   sarama.CompressionZSTD,
}

// config for sarama speaking version ("<kafka version>" or "<kafka version>:<codec>", the
// producer's compression).
func config(summary map[string]interface{}, version string) *sarama.Config {
	c := sarama.NewConfig()
	if i := strings.IndexByte(version, ':'); i >= 0 {
		codec, ok := codecs[version[i+1:]]
		if !ok {
			common.Fail(summary, fmt.Errorf("unknown codec %q", version[i+1:]))
		}
		c.Producer.Compression = codec
		version = version[:i]
	}
	v, err := sarama.ParseKafkaVersion(version)
	if err != nil {
		common.Fail(summary, err)
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

func produce(bootstrap, topic string, from, count int, extra []string) {
	summary := map[string]interface{}{"client": "sarama", "mode": "produce"}
	p, err := sarama.NewSyncProducer([]string{bootstrap}, config(summary, extra[0]))
	if err != nil {
		common.Fail(summary, err)
	}
	msgs := make([]*sarama.ProducerMessage, 0, count)
	for i := from; i < from+count; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.ByteEncoder(common.Key(i)), Value: sarama.ByteEncoder(common.Value(i))})
	}
	if err := p.SendMessages(msgs); err != nil {
		if pe, ok := err.(sarama.ProducerErrors); ok && len(pe) > 0 {
			err = fmt.Errorf("%v; the first: %v", err, pe[0].Err)
		}
		common.Fail(summary, err)
	}
	if err := p.Close(); err != nil {
		common.Fail(summary, err)
	}
	common.Produced(summary, count, nil)
}

// handler collects what every member it serves reads (shared by both members in "pair").
type handler struct {
	mu         sync.Mutex
	lines      []string
	partitions map[int]bool
	claims     map[string][]int32 // member id -> the partitions of its current session
	generation map[string]int32
	expect     int
	done       chan struct{}
	once       sync.Once
}

func newHandler(expect int) *handler {
	return &handler{expect: expect, done: make(chan struct{}), partitions: map[int]bool{}, claims: map[string][]int32{}, generation: map[string]int32{}}
}

func (h *handler) Setup(s sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ps := range s.Claims() {
		h.claims[s.MemberID()] = append([]int32(nil), ps...)
	}
	h.generation[s.MemberID()] = s.GenerationID()
	return nil
}
func (h *handler) Cleanup(s sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.claims, s.MemberID())
	return nil
}
func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.mu.Lock()
		h.lines = append(h.lines, string(m.Key)+"\t"+string(m.Value))
		h.partitions[int(m.Partition)] = true
		n := len(h.lines)
		h.mu.Unlock()
		s.MarkMessage(m, "")
		if n >= h.expect {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

// split reports each member's partitions once two members of one generation hold them all.
func (h *handler) split(partitions int) ([][]int32, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.claims) != 2 {
		return nil, false
	}
	out := [][]int32{}
	gens := map[int32]bool{}
	total := 0
	for id, ps := range h.claims {
		if len(ps) == 0 {
			return nil, false
		}
		gens[h.generation[id]] = true
		total += len(ps)
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool {
		return len(out[i]) > len(out[j]) || (len(out[i]) == len(out[j]) && out[i][0] < out[j][0])
	})
	return out, len(gens) == 1 && total == partitions
}

// member runs one ConsumerGroup until ctx ends; errors go to addErr.
func member(ctx context.Context, g sarama.ConsumerGroup, topic string, h *handler, addErr func(string)) chan struct{} {
	go func() {
		for e := range g.Errors() {
			addErr(e.Error())
		}
	}()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{topic}, h); err != nil && ctx.Err() == nil {
				addErr(err.Error())
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	return stopped
}

// errorList collects the errors from the members' goroutines.
type errorList struct {
	mu   sync.Mutex
	list []string
}

func (e *errorList) add(msg string) {
	e.mu.Lock()
	e.list = append(e.list, msg)
	e.mu.Unlock()
}

// run starts `members` ConsumerGroup members; with produceFirst, waits until they have split the
// partitions between them and then produces expect messages; reads until expect arrived, lets
// the commit interval pass, closes every member and prints the summary.
func run(mode, bootstrap, topic, group string, members, expect int, produceFirst bool, version string) {
	summary := map[string]interface{}{"client": "sarama", "mode": mode}
	errs := &errorList{list: []string{}}
	partitions := 0
	if produceFirst {
		client, err := sarama.NewClient([]string{bootstrap}, config(summary, version))
		if err != nil {
			common.Fail(summary, err)
		}
		ps, err := client.Partitions(topic)
		if err != nil {
			common.Fail(summary, err)
		}
		partitions = len(ps)
		client.Close()
	}
	h := newHandler(expect)
	ctx, cancel := context.WithCancel(context.Background())
	groups := []sarama.ConsumerGroup{}
	stopped := []chan struct{}{}
	for i := 0; i < members; i++ {
		g, err := sarama.NewConsumerGroup([]string{bootstrap}, group, config(summary, version))
		if err != nil {
			common.Fail(summary, err)
		}
		groups = append(groups, g)
		stopped = append(stopped, member(ctx, g, topic, h, errs.add))
	}
	ready := true
	if produceFirst {
		var split [][]int32
		deadline := time.Now().Add(60 * time.Second)
		for split == nil && time.Now().Before(deadline) {
			if s, ok := h.split(partitions); ok {
				split = s
			} else {
				time.Sleep(100 * time.Millisecond)
			}
		}
		summary["members"] = split
		ready = split != nil
		if !ready {
			errs.add("timed out waiting for the members to split the partitions")
		} else if p, err := sarama.NewSyncProducer([]string{bootstrap}, config(summary, version)); err != nil {
			errs.add(err.Error())
		} else {
			msgs := make([]*sarama.ProducerMessage, 0, expect)
			for i := 0; i < expect; i++ {
				msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.ByteEncoder(common.Key(i)), Value: sarama.ByteEncoder(common.Value(i))})
			}
			if err := p.SendMessages(msgs); err != nil {
				errs.add(err.Error())
			}
			p.Close()
		}
	}
	if ready {
		select {
		case <-h.done:
		case <-time.After(60 * time.Second):
			errs.add("timed out waiting for messages")
		}
		// Past the commit interval, so the marks are committed while the sessions still run.
		time.Sleep(600 * time.Millisecond)
	}
	cancel()
	for i, g := range groups {
		<-stopped[i]
		if err := g.Close(); err != nil {
			errs.add(err.Error())
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	errs.mu.Lock()
	defer errs.mu.Unlock()
	common.Consumed(summary, h.lines, h.partitions, errs.list)
}

func consume(bootstrap, topic, group string, expect int, extra []string) {
	run("consume", bootstrap, topic, group, 1, expect, false, extra[0])
}

func main() {
	if len(os.Args) == 7 && os.Args[1] == "pair" {
		count, err := strconv.Atoi(os.Args[5])
		if err != nil {
			common.Fail(map[string]interface{}{"client": "sarama", "mode": "pair"}, err)
		}
		run("pair", os.Args[2], os.Args[3], os.Args[4], 2, count, true, os.Args[6])
		return
	}
	common.Main(1, produce, consume)
}
