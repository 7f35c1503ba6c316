import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A group member as applications write them: poll, process each record (journaled with the
 * generation it was processed in), commit by `commit` mode:
 *   auto      enable.auto.commit=true
 *   sync      commitSync() after each batch, and in onPartitionsRevoked unless revoke.commit=false
 *   async     commitAsync() after each batch, commitSync() on close
 *   deferred  commitSync(Map) of every offset it ever processed, on the lab's `commit` command,
 *             never forgetting revoked partitions (seed 003's zombie; alpakka-kafka #1121)
 *   worker    each batch handed to a worker thread; the poll loop commitAsync(Map)s what the
 *             worker finished, and on revocation commits what is finished without waiting for
 *             the batches in hand: a batch finished after the revocation is committed late,
 *             for a partition the member no longer owns (the poll loop pauses its partitions
 *             while two batches wait)
 * Control commands (one per line in `control`): `sleep MS` (the handler stalls on its next
 * record, or `sleep MS P` on its next record of partition P), `commit` (deferred commit now), `commit-assign` (the deferred offsets committed by a
 * second consumer of the same group.id through assign()+commitSync), `commit-owned` (the
 * deferred offsets of the partitions it owns now, commitSync), `stop` (close).
 * Status lines on stdout let the lab sequence its faults.
 */
public final class LabConsumer {
    private static final Logger log = LoggerFactory.getLogger(LabConsumer.class);

    private static final Map<String, String> ASSIGNORS = new HashMap<>();
    static {
        ASSIGNORS.put("range", "org.apache.kafka.clients.consumer.RangeAssignor");
        ASSIGNORS.put("roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor");
        ASSIGNORS.put("sticky", "org.apache.kafka.clients.consumer.StickyAssignor");
        ASSIGNORS.put("cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
    }

    public static void main(String[] argv) throws Exception {
        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> log.error("Uncaught exception in {}", thread.getName(), error));
        Args args = new Args(argv);
        String member = args.need("member");
        String commit = args.get("commit", "sync");
        String protocol = args.get("protocol", "classic");
        long delay = args.num("delay.ms", 0);
        boolean commitOnRevoke = Boolean.parseBoolean(args.get("revoke.commit", "true"));
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args.need("bootstrap"));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, args.need("group"));
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, args.get("client.id", member));
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, args.get("reset", "earliest"));
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, Boolean.toString(commit.equals("auto")));
        props.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, args.get("max.poll.ms", "10000"));
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, args.get("max.poll.records", "50"));
        if (protocol.equals("consumer")) {
            props.put("group.protocol", "consumer");  // KIP-848; the broker assigns, no client-side timeouts
        } else {
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, args.get("session.ms", "6000"));
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, args.get("heartbeat.ms", "1000"));
            props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, ASSIGNORS.get(args.get("assignor", "range")));
        }
        if (args.values.containsKey("instance")) props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, args.need("instance"));
        props.putAll(args.props);

        Control control = new Control(args.get("control", null));
        AtomicBoolean stopping = new AtomicBoolean();
        Map<TopicPartition, Long> processed = new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
        Map<TopicPartition, Long> done = new ConcurrentHashMap<>();  // worker mode: finished, not yet committed
        ThreadPoolExecutor worker = commit.equals("worker")
            ? new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>()) : null;
        long[] stall = new long[] {0, -1};  // worker mode: stall ms, and the partition to stall on (-1: any)
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props);
        Member.closeOnShutdown(consumer, stopping, Thread.currentThread());
        try (Journal journal = new Journal(args.need("journal"))) {
            consumer.subscribe(List.of(args.need("topic").split(",")), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    if (commit.equals("sync") && commitOnRevoke && !partitions.isEmpty()) {
                        try {
                            consumer.commitSync(offsetsOf(processed, partitions));
                        } catch (RuntimeException e) {
                            log.warn("Commit of revoked partitions {} failed: {}", partitions, e.toString());
                        }
                    }
                    if (commit.equals("worker") && !partitions.isEmpty()) {
                        Map<TopicPartition, OffsetAndMetadata> finished = finishedOf(done, partitions);
                        try {
                            if (!finished.isEmpty()) consumer.commitSync(finished);
                        } catch (RuntimeException e) {
                            log.warn("Commit of revoked partitions {} failed: {}", partitions, e.toString());
                        }
                    }
                    forget(partitions);
                    Member.status("revoked " + partitions);
                }

                /** A correct application forgets what it processed of a partition it gave up;
                 *  the deferred (zombie) mode does not. */
                private void forget(Collection<TopicPartition> partitions) {
                    if (!commit.equals("deferred")) processed.keySet().removeAll(partitions);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    Member.assigned(consumer, partitions);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    forget(partitions);
                    Member.status("lost " + partitions);
                }
            });
            long stallMs = 0;
            Member.status("started");
            while (!stopping.get()) {
                for (String command : control.next()) {
                    String[] words = command.split("\\s+");
                    switch (words[0]) {
                        case "sleep":
                            stallMs = Long.parseLong(words[1]);
                            synchronized (stall) {
                                stall[0] = stallMs;
                                stall[1] = words.length > 2 ? Long.parseLong(words[2]) : -1;
                            }
                            break;
                        case "stop": stopping.set(true); break;
                        case "commit": commitDeferred(consumer, processed); break;
                        case "commit-assign": commitByAssign(props, processed); break;
                        case "commit-owned": commitOwned(consumer, processed); break;
                        default: log.warn("Unknown lab command {}", command);
                    }
                }
                if (stopping.get()) break;
                ConsumerRecords<String, String> records = Member.poll(consumer);
                if (records == null) break;  // woken by the shutdown hook
                if (worker != null) {
                    stallMs = 0;
                    if (!records.isEmpty()) handOff(worker, records, consumer, journal, member, delay, stall, done);
                    backPressure(consumer, worker);
                    Map<TopicPartition, OffsetAndMetadata> finished = finishedOf(done, null);
                    if (!finished.isEmpty()) {
                        consumer.commitAsync(finished, (offsets, error) -> {
                            if (error != null) log.warn("Async commit of {} failed: {}", offsets, error.toString());
                            else Member.status("async-committed " + offsets);
                        });
                    }
                    continue;
                }
                for (ConsumerRecord<String, String> record : records) {
                    Member.pace(stallMs, delay);
                    stallMs = 0;
                    journal.write(Member.entry(member, consumer.groupMetadata().generationId(), record));
                    processed.put(new TopicPartition(record.topic(), record.partition()), record.offset() + 1);
                }
                if (!records.isEmpty()) {
                    Member.status("processed " + records.count() + " " + processed);
                    try {
                        if (commit.equals("sync")) consumer.commitSync();
                        else if (commit.equals("async")) consumer.commitAsync();
                    } catch (CommitFailedException e) {
                        log.error("Commit failed, the records of this batch will be processed again: {}", e.getMessage());
                        Member.status("commit-failed");
                    } catch (RebalanceInProgressException e) {
                        // cooperative rebalancing: the next batch's commit (or onPartitionsRevoked) covers these offsets
                        log.warn("Commit postponed, a rebalance is in progress: {}", e.getMessage());
                    } catch (WakeupException e) {
                        break;
                    }
                }
            }
            Member.status("closing");
            if (worker != null) {
                worker.shutdown();
                worker.awaitTermination(30, TimeUnit.SECONDS);
                Map<TopicPartition, OffsetAndMetadata> finished = finishedOf(done, null);
                try {
                    if (!finished.isEmpty()) consumer.commitSync(finished);
                } catch (RuntimeException e) {
                    log.warn("Final commit failed: {}", e.toString());
                }
            }
            if (commit.equals("async")) {
                try {
                    consumer.commitSync();
                } catch (RuntimeException e) {
                    log.warn("Final commit failed: {}", e.toString());
                }
            }
            consumer.close(Duration.ofSeconds(10));
            Member.status("closed");
        }
    }

    static Map<TopicPartition, OffsetAndMetadata> offsetsOf(Map<TopicPartition, Long> processed, Collection<TopicPartition> only) {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        for (Map.Entry<TopicPartition, Long> e : processed.entrySet()) {
            if (only == null || only.contains(e.getKey())) out.put(e.getKey(), new OffsetAndMetadata(e.getValue()));
        }
        return out;
    }

    /** Commits everything it ever processed, owned or not: the bug behind backward commits. */
    static void commitDeferred(KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> processed) {
        Map<TopicPartition, OffsetAndMetadata> offsets = offsetsOf(processed, null);
        try {
            consumer.commitSync(offsets);
            Member.status("committed " + offsets);
        } catch (RuntimeException e) {
            log.error("Deferred commit of {} failed: {}", offsets, e.toString());
            Member.status("commit-failed " + e);
        }
    }

    /** The deferred offsets of the partitions the member owns now: a correct commit. */
    static void commitOwned(KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> processed) {
        Map<TopicPartition, OffsetAndMetadata> offsets = offsetsOf(processed, consumer.assignment());
        try {
            consumer.commitSync(offsets);
            Member.status("committed " + offsets);
        } catch (RuntimeException e) {
            log.error("Commit of {} failed: {}", offsets, e.toString());
            Member.status("commit-failed " + e);
        }
    }

    /** The deferred offsets committed by a standalone consumer (assign(), no group membership). */
    static void commitByAssign(Properties props, Map<TopicPartition, Long> processed) {
        Properties standalone = new Properties();
        standalone.putAll(props);
        standalone.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        standalone.remove("group.protocol");
        standalone.remove(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG);
        standalone.put(ConsumerConfig.CLIENT_ID_CONFIG, props.getProperty(ConsumerConfig.CLIENT_ID_CONFIG) + "-committer");
        Map<TopicPartition, OffsetAndMetadata> offsets = offsetsOf(processed, null);
        try (KafkaConsumer<String, String> committer = new KafkaConsumer<>(standalone)) {
            committer.assign(new ArrayList<>(offsets.keySet()));
            committer.commitSync(offsets);
            Member.status("committed " + offsets);
        } catch (RuntimeException e) {
            log.error("Commit of {} through assign() failed: {}", offsets, e.toString());
            Member.status("commit-failed " + e);
        }
    }

    /** Worker mode: the batch processed on the worker thread, journaled with the generation it
     *  was polled in; finished offsets go to `done` for the poll loop to commit. */
    static void handOff(ThreadPoolExecutor worker, ConsumerRecords<String, String> records, KafkaConsumer<String, String> consumer,
                        Journal journal, String member, long delay, long[] stall, Map<TopicPartition, Long> done) {
        int generation = consumer.groupMetadata().generationId();
        List<ConsumerRecord<String, String>> batch = new ArrayList<>();
        records.forEach(batch::add);
        Member.status("polled " + batch.size() + " gen=" + generation);
        worker.submit(() -> {
            for (ConsumerRecord<String, String> record : batch) {
                long stallMs = 0;
                synchronized (stall) {
                    if (stall[0] > 0 && (stall[1] < 0 || stall[1] == record.partition())) {
                        stallMs = stall[0];
                        stall[0] = 0;
                    }
                }
                try {
                    Member.pace(stallMs, delay);
                } catch (InterruptedException e) {
                    return;
                }
                journal.write(Member.entry(member, generation, record));
                done.merge(new TopicPartition(record.topic(), record.partition()), record.offset() + 1, Math::max);
            }
            Member.status("finished " + batch.size());
        });
    }

    /** Pause fetching while two batches wait for the worker, resume when it has caught up. */
    static void backPressure(KafkaConsumer<String, String> consumer, ThreadPoolExecutor worker) {
        int waiting = worker.getQueue().size();
        if (waiting >= 2 && consumer.paused().size() < consumer.assignment().size()) consumer.pause(consumer.assignment());
        else if (waiting == 0 && !consumer.paused().isEmpty()) consumer.resume(consumer.paused());
    }

    /** The finished offsets (of `only`, or all), taken out of `done`. */
    static Map<TopicPartition, OffsetAndMetadata> finishedOf(Map<TopicPartition, Long> done, Collection<TopicPartition> only) {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        for (TopicPartition tp : new ArrayList<>(done.keySet())) {
            if (only != null && !only.contains(tp)) continue;
            Long offset = done.remove(tp);
            if (offset != null) out.put(tp, new OffsetAndMetadata(offset));
        }
        return out;
    }
}
