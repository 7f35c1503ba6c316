import java.io.FileWriter;
import java.io.Writer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consume-transform-produce under exactly-once (KIP-98, KIP-447): each polled batch is forwarded
 * to `output` in one transaction with its offsets (sendOffsetsToTransaction with the consumer's
 * group metadata). Each attempt is journaled to `journal`; what took effect is what `output`
 * holds when read with read_committed (`mode=dump`), so an aborted or fenced attempt is not
 * processing. Two instances given one `transactional.id` fence each other: the newer one's
 * initTransactions bumps the producer epoch, the older one's next send fails (InvalidProducerEpochException,
 * abortable), its abort or commit with ProducerFencedException, and it shuts down, as the
 * KafkaProducer javadoc tells applications to. Control commands: `sleep MS` (stall inside the open transaction), `stop`.
 */
public final class LabTransactor {
    private static final Logger log = LoggerFactory.getLogger(LabTransactor.class);

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv);
        if (args.get("mode", "run").equals("dump")) {
            dump(args);
            return;
        }
        String member = args.need("member");
        String output = args.need("output");
        long delay = args.num("delay.ms", 0);
        Properties cprops = new Properties();
        cprops.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args.need("bootstrap"));
        cprops.put(ConsumerConfig.GROUP_ID_CONFIG, args.need("group"));
        cprops.put(ConsumerConfig.CLIENT_ID_CONFIG, member);
        cprops.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cprops.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cprops.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cprops.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cprops.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cprops.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, args.get("max.poll.ms", "10000"));
        cprops.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, args.get("max.poll.records", "20"));
        cprops.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, args.get("session.ms", "6000"));
        cprops.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        Properties pprops = new Properties();
        pprops.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args.need("bootstrap"));
        pprops.put(ProducerConfig.CLIENT_ID_CONFIG, member + "-producer");
        pprops.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, args.need("transactional.id"));
        pprops.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pprops.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        for (String name : args.props.stringPropertyNames()) {
            (name.startsWith("producer.") ? pprops : cprops).put(name.replaceFirst("^(producer|consumer)\\.", ""), args.props.getProperty(name));
        }
        Control control = new Control(args.get("control", null));
        AtomicBoolean stopping = new AtomicBoolean();
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cprops);
        KafkaProducer<String, String> producer = new KafkaProducer<>(pprops);
        Member.closeOnShutdown(consumer, stopping, Thread.currentThread());
        boolean fenced = false;
        try (Journal journal = new Journal(args.need("journal"))) {
            producer.initTransactions();
            Member.status("initialized");
            consumer.subscribe(List.of(args.need("topic").split(",")), new org.apache.kafka.clients.consumer.ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(java.util.Collection<TopicPartition> partitions) {
                    Member.status("revoked " + partitions);
                }

                @Override
                public void onPartitionsAssigned(java.util.Collection<TopicPartition> partitions) {
                    Member.assigned(consumer, partitions);
                }
            });
            long stallMs = 0;
            while (!stopping.get()) {
                for (String command : control.next()) {
                    String[] words = command.split("\\s+");
                    if (words[0].equals("sleep")) stallMs = Long.parseLong(words[1]);
                    else if (words[0].equals("stop")) stopping.set(true);
                    else log.warn("Unknown lab command {}", command);
                }
                if (stopping.get()) break;
                ConsumerRecords<String, String> records = Member.poll(consumer);
                if (records == null) break;  // woken by the shutdown hook
                if (records.isEmpty()) continue;
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                Map<TopicPartition, Long> firsts = new HashMap<>();
                try {
                    producer.beginTransaction();
                    for (ConsumerRecord<String, String> record : records) {
                        TopicPartition tp = new TopicPartition(record.topic(), record.partition());
                        firsts.putIfAbsent(tp, record.offset());
                        String entry = Member.entry(member, consumer.groupMetadata().generationId(), record);
                        journal.write(entry);
                        producer.send(new ProducerRecord<>(output, record.partition(), record.key(), entry));
                        offsets.put(tp, new OffsetAndMetadata(record.offset() + 1));
                        Member.pace(stallMs, delay);
                        stallMs = 0;
                    }
                    producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                    producer.commitTransaction();
                    Member.status("committed " + offsets.size() + " " + offsets);
                } catch (ProducerFencedException e) {
                    log.error("Transactional producer fenced, shutting down: {}", e.toString());
                    Member.status("fenced " + e.getClass().getSimpleName());
                    fenced = true;
                    break;
                } catch (KafkaException e) {
                    // abortable (InvalidProducerEpochException included, KIP-588): abort, and rewind to the
                    // batch's first records (its offsets were not committed); the abort itself may be fenced
                    log.warn("Transaction aborted, the batch will be processed again: {}", e.toString());
                    try {
                        producer.abortTransaction();
                    } catch (ProducerFencedException | InvalidProducerEpochException fencedToo) {
                        log.error("Transactional producer fenced, shutting down: {}", fencedToo.toString());
                        Member.status("fenced " + fencedToo.getClass().getSimpleName());
                        fenced = true;
                        break;
                    }
                    for (Map.Entry<TopicPartition, Long> first : firsts.entrySet()) {
                        if (consumer.assignment().contains(first.getKey())) consumer.seek(first.getKey(), first.getValue());
                    }
                    Member.status("aborted " + e.getClass().getSimpleName());
                }
            }
            Member.status("closing");
        } finally {
            producer.close(Duration.ofSeconds(fenced ? 0 : 10));
            consumer.close(Duration.ofSeconds(10));
            Member.status("closed");
        }
    }

    /** `output` read from the start with read_committed, one line a record value, to `out`. */
    static void dump(Args args) throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args.need("bootstrap"));
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props);
             Writer out = new FileWriter(args.need("out"))) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(args.need("output"))) {
                partitions.add(new TopicPartition(info.topic(), info.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);  // the last stable offsets under read_committed
            long deadline = System.currentTimeMillis() + 60_000;
            while (System.currentTimeMillis() < deadline) {
                boolean done = true;
                for (TopicPartition tp : partitions) done &= consumer.position(tp) >= ends.get(tp);
                if (done) break;
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    out.write(record.value() + "\n");
                }
            }
        }
    }
}
