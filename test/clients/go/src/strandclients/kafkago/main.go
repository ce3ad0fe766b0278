// segmentio/kafka-go (Debian golang-github-segmentio-kafka-go-dev 0.2.1) against strand, for
// test/e2e/go_clients.test.ts; command line and summary in ../common. kafka-go 0.2.1 speaks fixed
// old versions without asking ApiVersions: Produce v2 (magic 1 message sets), Fetch v2,
// ListOffsets v1, JoinGroup v1, SyncGroup v0, OffsetCommit v2, OffsetFetch v1.
//
// The extra argument is the Writer's codec: none, gzip, snappy or lz4 (one compressed wrapper
// message per batch). produce sends k<i>/v<i> with a Writer, hash-partitioned, acks=all. consume reads with a group
// Reader until expect messages arrived, committing each synchronously, and closes (LeaveGroup).
package main

import (
	"context"
	"fmt"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/gzip"
	"github.com/segmentio/kafka-go/lz4"
	"github.com/segmentio/kafka-go/snappy"

	"strandclients/common"
)

// codecs for produce's optional extra argument (the Writer's compression).
var codecs = map[string]func() kafka.CompressionCodec{
	"gzip":   func() kafka.CompressionCodec { return gzip.NewCompressionCodec() },
	"snappy": func() kafka.CompressionCodec { return snappy.NewCompressionCodec() },
	"lz4":    func() kafka.CompressionCodec { return lz4.NewCompressionCodec() },
}

func produce(bootstrap, topic string, from, count int, extra []string) {
	summary := map[string]interface{}{"client": "kafka-go", "mode": "produce"}
	var codec kafka.CompressionCodec
	if extra[0] != "none" {
		c, ok := codecs[extra[0]]
		if !ok {
			common.Fail(summary, fmt.Errorf("unknown codec %q", extra[0]))
		}
		codec = c()
	}
	w := kafka.NewWriter(kafka.WriterConfig{
		Brokers:          []string{bootstrap},
		Topic:            topic,
		Balancer:         &kafka.Hash{},
		BatchSize:        500,
		BatchTimeout:     50 * time.Millisecond,
		RequiredAcks:     -1,
		CompressionCodec: codec,
	})
	msgs := make([]kafka.Message, 0, count)
	for i := from; i < from+count; i++ {
		msgs = append(msgs, kafka.Message{Key: common.Key(i), Value: common.Value(i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := w.WriteMessages(ctx, msgs...)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		common.Fail(summary, err)
	}
	common.Produced(summary, count, nil)
}

func consume(bootstrap, topic, group string, expect int, _ []string) {
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
	common.Consumed(summary, lines, partitions, errs)
}

func main() { common.Main(1, produce, consume) }
