// Command franz is the lab's franz-go consumer: it journals every record it processes with the
// group generation the client holds, and logs through kgo.BasicLogger on stderr as an
// application that only turns franz-go's logging on does (no time prefix, the default).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type topics []string

func (t *topics) String() string     { return strings.Join(*t, ",") }
func (t *topics) Set(s string) error { *t = append(*t, s); return nil }

type processed struct {
	Member     string `json:"member"`
	Generation *int32 `json:"generation"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Offset     int64  `json:"offset"`
}

func main() {
	var subscribed topics
	bootstrap := flag.String("bootstrap", "", "broker address")
	group := flag.String("group", "", "consumer group")
	flag.Var(&subscribed, "topic", "topic to consume (repeatable)")
	member := flag.String("member", "", "name of this member in the journal")
	journalDir := flag.String("journal", "", "directory of processed-<member>.jsonl")
	reset := flag.String("offset-reset", "earliest", "earliest or latest")
	session := flag.Int("session-timeout-ms", 10000, "session timeout")
	heartbeat := flag.Int("heartbeat-interval-ms", 3000, "heartbeat interval")
	metadataAge := flag.Int("metadata-max-age-ms", 300000, "metadata max age")
	commitEvery := flag.Int("auto-commit-interval-ms", 5000, "autocommit interval")
	slowAfter := flag.Int("slow-after", 0, "stall once after this many records")
	slowMs := flag.Int("slow-ms", 0, "how long the stall lasts")
	level := flag.String("log-level", "INFO", "INFO or DEBUG")
	flag.Parse()
	if *bootstrap == "" || *group == "" || *member == "" || *journalDir == "" || len(subscribed) == 0 {
		fmt.Fprintln(os.Stderr, "--bootstrap, --group, --topic, --member and --journal are required")
		os.Exit(2)
	}
	logLevel := kgo.LogLevelInfo
	if *level == "DEBUG" {
		logLevel = kgo.LogLevelDebug
	}
	start := kgo.NewOffset().AtStart()
	if *reset == "latest" {
		start = kgo.NewOffset().AtEnd()
	}
	client, err := kgo.NewClient(
		kgo.SeedBrokers(*bootstrap),
		kgo.ConsumerGroup(*group),
		kgo.ConsumeTopics(subscribed...),
		kgo.ConsumeResetOffset(start),
		kgo.SessionTimeout(time.Duration(*session)*time.Millisecond),
		kgo.HeartbeatInterval(time.Duration(*heartbeat)*time.Millisecond),
		kgo.MetadataMaxAge(time.Duration(*metadataAge)*time.Millisecond),
		kgo.AutoCommitInterval(time.Duration(*commitEvery)*time.Millisecond),
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, logLevel, nil)),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.MkdirAll(*journalDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	journal, err := os.OpenFile(filepath.Join(*journalDir, "processed-"+*member+".jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	count, stalled := 0, false
	for ctx.Err() == nil {
		fetches := client.PollFetches(ctx)
		fetches.EachRecord(func(r *kgo.Record) {
			_, generation := client.GroupMetadata()
			line := processed{Member: *member, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
			if generation >= 0 {
				line.Generation = &generation
			}
			encoded, _ := json.Marshal(line)
			journal.Write(append(encoded, '\n'))
			count++
			if *slowMs > 0 && !stalled && count >= *slowAfter {
				stalled = true
				time.Sleep(time.Duration(*slowMs) * time.Millisecond)
			}
		})
	}
	client.Close()
	journal.Close()
}
