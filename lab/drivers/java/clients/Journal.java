import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Append-only JSON-lines journal of the lab's truth; each line is written through at once, so a
 *  SIGKILL loses at most the line being written (the truth reader ignores a torn last line). */
final class Journal implements AutoCloseable {
    private final OutputStream out;

    Journal(String path) throws IOException {
        this.out = new FileOutputStream(path, true);
    }

    synchronized void write(String json) {
        try {
            out.write((json + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            throw new RuntimeException("journal write failed", e);
        }
    }

    static String quote(String s) {
        return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }
}
