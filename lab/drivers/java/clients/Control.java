import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/** Commands the lab writes to a driver's control file, one per line, each read once. */
final class Control {
    private final Path path;
    private int seen;

    Control(String path) {
        this.path = path == null ? null : Paths.get(path);
    }

    List<String> next() {
        List<String> out = new ArrayList<>();
        if (path == null || !Files.exists(path)) return out;
        try {
            List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
            // only whole lines: the lab writes each command with its newline at once
            for (; seen < lines.size(); seen++) {
                String line = lines.get(seen).trim();
                if (!line.isEmpty()) out.add(line);
            }
        } catch (IOException e) {
            // a control file being replaced is read on the next loop
        }
        return out;
    }
}
