import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Produces `count` records at `rate` per second (lab commands: pause, resume, stop), round-robin over the partitions it currently
 *  knows (its metadata decides when a new partition starts getting records: seed 001), and
 *  journals each record the broker acknowledged with its offset. */
public final class LabProducer {
    private static final Logger log = LoggerFactory.getLogger(LabProducer.class);

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv);
        String topic = args.need("topic");
        long count = args.num("count", 1000), rate = args.num("rate", 100);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args.need("bootstrap"));
        props.put(ProducerConfig.CLIENT_ID_CONFIG, args.get("client.id", "lab-producer"));
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "100");  // batches of several records keep the dumps small
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.putAll(args.props);
        Control control = new Control(args.get("control", null));
        AtomicBoolean stop = new AtomicBoolean();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop.set(true)));
        try (Journal journal = new Journal(args.need("journal"));
             KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            long start = System.nanoTime();
            int known = 0;
            boolean paused = false;
            for (long i = 0; i < count && !stop.get(); i++) {
                for (String command : control.next()) {
                    if (command.equals("stop")) stop.set(true);
                    else if (command.equals("pause")) paused = true;
                    else if (command.equals("resume")) paused = false;
                }
                if (stop.get()) break;
                if (paused) {
                    producer.flush();
                    Thread.sleep(50);
                    start = System.nanoTime() - i * 1_000_000_000L / rate;  // the rate resumes, no burst
                    i--;
                    continue;
                }
                List<PartitionInfo> partitions = producer.partitionsFor(topic);
                if (partitions.size() != known) {
                    log.info("Producing to {} partitions of {}", partitions.size(), topic);
                    known = partitions.size();
                }
                int partition = (int) (i % partitions.size());
                producer.send(new ProducerRecord<>(topic, partition, "k" + i, "v" + i), (metadata, error) -> {
                    if (error == null) {
                        journal.write("{\"topic\":" + Journal.quote(metadata.topic()) + ",\"partition\":" + metadata.partition()
                            + ",\"offset\":" + metadata.offset() + "}");
                    } else {
                        log.error("Record to {}-{} not acknowledged", topic, partition, error);
                    }
                });
                long due = start + (i + 1) * 1_000_000_000L / rate;
                long wait = due - System.nanoTime();
                if (wait > 0) Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
            }
            producer.flush();
            producer.close(Duration.ofSeconds(10));
        }
    }
}
