// confluent-kafka-go (Debian golang-github-confluentinc-confluent-kafka-go-dev 0.11.6, cgo over
// the system's librdkafka 2.0.2) against strand, for test/e2e/go_clients.test.ts; command line
// and summary in ../common.
//
// produce sends k<i>/v<i> with a header h=<i>, acks=all, and waits for every delivery report.
// consume subscribes in the group (auto commit off), reads until expect messages arrived, counts
// messages whose header does not match their value, commits synchronously, and closes.
package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/kafka"

	"strandclients/common"
)

func produce(bootstrap, topic string, from, count int, _ []string) {
	summary := map[string]interface{}{"client": "confluent-kafka-go", "mode": "produce"}
	errs := []string{}
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "acks": "all", "client.id": "strand-go-confluent", "linger.ms": 5})
	if err != nil {
		common.Fail(summary, err)
	}
	for i := from; i < from+count; i++ {
		msg := &kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key:            common.Key(i),
			Value:          common.Value(i),
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
	acked := 0
	timeout := time.After(60 * time.Second)
loop:
	for acked < count {
		select {
		case ev := <-p.Events():
			switch e := ev.(type) {
			case *kafka.Message:
				if e.TopicPartition.Error != nil {
					errs = append(errs, e.TopicPartition.Error.Error())
				} else {
					acked++
				}
			case kafka.Error:
				errs = append(errs, e.Error())
			}
		case <-timeout:
			errs = append(errs, "timed out waiting for delivery reports")
			break loop
		}
	}
	p.Close()
	common.Produced(summary, acked, errs)
}

func consume(bootstrap, topic, group string, expect int, _ []string) {
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
		common.Fail(summary, err)
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
	summary["bad_headers"] = badHeaders
	summary["committed"] = strings.Join(commits, ",")
	common.Consumed(summary, lines, partitions, errs)
}

func main() { common.Main(0, produce, consume) }
