import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The lab's Kafka Streams driver: a count per key into a persistent (RocksDB) store with a
 * changelog, journaling every processed record and the store's value before and after it.
 *
 * Modes: {@code run} (one Streams instance until SIGTERM; a {@code <control>/<instance>.command}
 * file holding {@code remove-thread} or {@code add-thread} changes its thread count), {@code produce} (keyed records, the
 * acked offsets journaled), {@code dump} (a topic read with read_committed, one line a record).
 * Arguments are {@code key=value}; keys starting with {@code streams.} go to StreamsConfig as is.
 */
public final class StreamsDriver {
    static final String STORE = "counts";

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (int i = 1; i < argv.length; i++) {
            int eq = argv[i].indexOf('=');
            if (eq < 0) throw new IllegalArgumentException("not key=value: " + argv[i]);
            args.put(argv[i].substring(0, eq), argv[i].substring(eq + 1));
        }
        switch (argv.length > 0 ? argv[0] : "") {
            case "run": run(args); break;
            case "produce": produce(args); break;
            case "dump": dump(args); break;
            case "serve": serve(args); break;
            default: throw new IllegalArgumentException("usage: StreamsDriver run|produce|dump|serve key=value...");
        }
    }

    static String need(Map<String, String> args, String key) {
        String value = args.get(key);
        if (value == null) throw new IllegalArgumentException("missing " + key + "=");
        return value;
    }

    static String quote(String text) {
        if (text == null) return "null";
        StringBuilder out = new StringBuilder("\"");
        for (char ch : text.toCharArray()) {
            if (ch == '"' || ch == '\\') out.append('\\').append(ch);
            else if (ch < 0x20) out.append(String.format("\\u%04x", (int) ch));
            else out.append(ch);
        }
        return out.append('"').toString();
    }

    /** One JSON object per line, written straight to the file so a SIGKILL loses no finished line. */
    static final class JsonLines implements AutoCloseable {
        private final OutputStream out;

        JsonLines(Path path) throws IOException {
            Files.createDirectories(path.getParent());
            out = new FileOutputStream(path.toFile(), true);
        }

        synchronized void write(String json) {
            try {
                out.write((json + "\n").getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }

        @Override
        public synchronized void close() throws IOException {
            out.close();
        }
    }

    static void writeAtomically(Path path, String text) {
        try {
            Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
            Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
            Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    /** Counts per key; journals the record, its task and thread, and the count before and after. */
    static final class CountProcessor implements Processor<String, String, String, String> {
        private final String instance;
        private final JsonLines journal;
        private final AtomicLong processed;
        private ProcessorContext<String, String> context;
        private KeyValueStore<String, Long> store;

        CountProcessor(String instance, JsonLines journal, AtomicLong processed) {
            this.instance = instance;
            this.journal = journal;
            this.processed = processed;
        }

        @Override
        public void init(ProcessorContext<String, String> context) {
            this.context = context;
            this.store = context.getStateStore(STORE);
        }

        @Override
        public void process(Record<String, String> record) {
            Long before = store.get(record.key());
            long after = (before == null ? 0L : before) + 1;
            store.put(record.key(), after);
            RecordMetadata meta = context.recordMetadata().orElseThrow(IllegalStateException::new);
            String thread = Thread.currentThread().getName();
            String json = "{\"member\":" + quote(instance + "/" + thread) + ",\"generation\":null"
                + ",\"topic\":" + quote(meta.topic()) + ",\"partition\":" + meta.partition() + ",\"offset\":" + meta.offset()
                + ",\"task\":" + quote(context.taskId().toString()) + ",\"key\":" + quote(record.key())
                + ",\"before\":" + (before == null ? 0L : before) + ",\"after\":" + after + "}";
            journal.write(json);
            processed.incrementAndGet();
            context.forward(record.withValue(json));
        }
    }

    static void run(Map<String, String> args) throws Exception {
        String instance = need(args, "instance");
        String input = need(args, "input");
        String output = need(args, "output");
        Path control = Paths.get(need(args, "control"));
        Files.createDirectories(control);
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, need(args, "application.id"));
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, need(args, "bootstrap"));
        props.put(StreamsConfig.CLIENT_ID_CONFIG, instance);
        props.put(StreamsConfig.STATE_DIR_CONFIG, need(args, "state.dir"));
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args.getOrDefault("processing.guarantee", "at_least_once"));
        props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, args.getOrDefault("num.standby.replicas", "0"));
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args.getOrDefault("num.stream.threads", "1"));
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        for (Map.Entry<String, String> entry : args.entrySet()) {
            if (entry.getKey().startsWith("streams.")) props.put(entry.getKey().substring("streams.".length()), entry.getValue());
        }
        JsonLines journal = new JsonLines(Paths.get(need(args, "journal")).resolve("attempts-" + instance + ".jsonl"));
        AtomicLong processed = new AtomicLong();

        StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STORE), Serdes.String(), Serdes.Long()));
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .process(() -> new CountProcessor(instance, journal, processed), STORE)
            .to(output, Produced.with(Serdes.String(), Serdes.String()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        Path stateFile = control.resolve(instance + ".state");
        streams.setStateListener((now, before) -> writeAtomically(stateFile, now.name() + "\n"));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            writeAtomically(stateFile, "CLOSED\n");
            stopped.countDown();
        }, "shutdown"));
        writeAtomically(stateFile, "CREATED\n");
        streams.start();
        Path countFile = control.resolve(instance + ".processed");
        Path commandFile = control.resolve(instance + ".command");
        while (!stopped.await(200, TimeUnit.MILLISECONDS)) {
            writeAtomically(countFile, processed.get() + "\n");
            if (Files.exists(commandFile)) {
                String command = new String(Files.readAllBytes(commandFile), StandardCharsets.UTF_8).trim();
                Files.delete(commandFile);
                // KafkaStreams#removeStreamThread/addStreamThread (2.8+): tasks move between threads of this instance
                String result = command.equals("remove-thread") ? String.valueOf(streams.removeStreamThread(Duration.ofSeconds(30)))
                    : command.equals("add-thread") ? String.valueOf(streams.addStreamThread()) : "unknown command " + command;
                writeAtomically(control.resolve(instance + ".result"), result + "\n");
            }
        }
    }

    static void produce(Map<String, String> args) throws Exception {
        String topic = need(args, "topic");
        int count = Integer.parseInt(need(args, "count"));
        int keys = Integer.parseInt(args.getOrDefault("keys", "16"));
        int first = Integer.parseInt(args.getOrDefault("first", "0"));
        long pauseMs = Long.parseLong(args.getOrDefault("pause.ms", "0"));
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, need(args, "bootstrap"));
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "lab-producer");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        try (JsonLines produced = new JsonLines(Paths.get(need(args, "journal")).resolve("produced.jsonl"));
             KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int n = first; n < first + count; n++) {
                String key = "k" + (n % keys);
                producer.send(new ProducerRecord<>(topic, key, "v" + n), (meta, error) -> {
                    if (error != null) throw new RuntimeException(error);
                    produced.write("{\"topic\":" + quote(meta.topic()) + ",\"partition\":" + meta.partition()
                        + ",\"offset\":" + meta.offset() + "}");
                });
                if (pauseMs > 0) Thread.sleep(pauseMs);
            }
            producer.flush();
        }
    }

    /**
     * One JVM for the run's producing and dumping: reads commands from stdin, one a line
     * ({@code produce key=value...}, {@code dump key=value...}), answers {@code ok} or
     * {@code error <message>} on stdout, so each step costs no JVM start.
     */
    static void serve(Map<String, String> defaults) throws Exception {
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split(" ");
            Map<String, String> args = new HashMap<>(defaults);
            for (int i = 1; i < words.length; i++) {
                int eq = words[i].indexOf('=');
                if (eq > 0) args.put(words[i].substring(0, eq), words[i].substring(eq + 1));
            }
            try {
                if (words[0].equals("produce")) produce(args);
                else if (words[0].equals("dump")) dump(args);
                else throw new IllegalArgumentException("unknown command " + words[0]);
                System.out.println("ok");
            } catch (Exception e) {
                System.out.println("error " + String.valueOf(e).replace('\n', ' '));
            }
            System.out.flush();
        }
    }

    static void dump(Map<String, String> args) throws Exception {
        String topic = need(args, "topic");
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, need(args, "bootstrap"));
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "lab-dump");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        try (JsonLines out = new JsonLines(Paths.get(need(args, "out")));
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic)) partitions.add(new TopicPartition(topic, info.partition()));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.currentTimeMillis() + 60_000;
            while (System.currentTimeMillis() < deadline) {
                boolean done = true;
                for (TopicPartition tp : partitions) done &= consumer.position(tp) >= end.get(tp);
                if (done) return;
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) out.write(record.value());
            }
            throw new IllegalStateException("could not read " + topic + " to its end offsets " + end);
        }
    }
}
