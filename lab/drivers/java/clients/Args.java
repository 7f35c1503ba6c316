import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/** key=value command-line arguments; `prop.NAME=VALUE` ones go to the client's config as is. */
final class Args {
    final Map<String, String> values = new LinkedHashMap<>();
    final Properties props = new Properties();

    Args(String[] argv) {
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (eq < 0) throw new IllegalArgumentException("not key=value: " + arg);
            String key = arg.substring(0, eq), value = arg.substring(eq + 1);
            if (key.startsWith("prop.")) props.setProperty(key.substring(5), value);
            else values.put(key, value);
        }
    }

    String get(String key, String fallback) {
        return values.getOrDefault(key, fallback);
    }

    String need(String key) {
        String value = values.get(key);
        if (value == null) throw new IllegalArgumentException("missing argument " + key + "=...");
        return value;
    }

    long num(String key, long fallback) {
        return Long.parseLong(get(key, Long.toString(fallback)));
    }
}
