import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;

/**
 * What the lab's group members (LabConsumer, LabTransactor) share: the status lines on stdout the
 * lab sequences its faults by, the shutdown hook that wakes the poll loop so the member closes
 * (and leaves its group) on SIGTERM, the handler's stall and pace, and the journal entry of a
 * processed record (member, generation, topic, partition, offset: lab/truth.py).
 */
final class Member {
    private Member() {
    }

    static void status(String line) {
        synchronized (System.out) {
            System.out.println("STATUS " + line);
            System.out.flush();
        }
    }

    /** On SIGTERM: `stopping` set, the consumer's poll woken, and `main` given 30 s to close it. */
    static void closeOnShutdown(KafkaConsumer<?, ?> consumer, AtomicBoolean stopping, Thread main) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (stopping.compareAndSet(false, true)) {
                consumer.wakeup();
                try {
                    main.join(30_000);
                } catch (InterruptedException ignored) {
                }
            }
        }));
    }

    /** One poll of the loop (200 ms); null when the shutdown hook woke it: the loop ends. */
    static <K, V> ConsumerRecords<K, V> poll(KafkaConsumer<K, V> consumer) {
        try {
            return consumer.poll(Duration.ofMillis(200));
        } catch (WakeupException e) {
            return null;
        }
    }

    /** The `assigned` status line of onPartitionsAssigned: the generation, the partitions added, all owned. */
    static void assigned(KafkaConsumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        status("assigned gen=" + consumer.groupMetadata().generationId() + " " + partitions + " now " + consumer.assignment());
    }

    /** The handler's time on a record: a stall of `stallMs` between `stalling` and `stalled` status lines, else `delayMs`. */
    static void pace(long stallMs, long delayMs) throws InterruptedException {
        if (stallMs > 0) {
            status("stalling " + stallMs);
            Thread.sleep(stallMs);
            status("stalled");
        } else if (delayMs > 0) {
            Thread.sleep(delayMs);
        }
    }

    /** The journal line of `record`, processed by `member` in `generation`. */
    static String entry(String member, int generation, ConsumerRecord<?, ?> record) {
        return "{\"member\":" + Journal.quote(member) + ",\"generation\":" + generation
            + ",\"topic\":" + Journal.quote(record.topic()) + ",\"partition\":" + record.partition()
            + ",\"offset\":" + record.offset() + "}";
    }
}
