package io.github.mongowriteguard.testkit.spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.bson.BsonDocument;

/** One unified-format test file, read (never copied) from the spec tests directory. */
record SpecFile(Path path, String name, BsonDocument document) {

    /** The system property naming the directory; empty or unset means {@link #defaultDirectory()}. */
    static final String DIR_PROPERTY = "spec.dir";

    /** {@code -Dspec.dir}, else {@code ../shared/spec-tests} next to the repository root. */
    static Path directory() {
        String configured = System.getProperty(DIR_PROPERTY, "").trim();
        return configured.isEmpty()
                ? defaultDirectory()
                : Path.of(configured).toAbsolutePath().normalize();
    }

    /** Surefire runs in the module directory; the repository root is its parent (the reactor's pom). */
    static Path defaultDirectory() {
        Path module = Path.of("").toAbsolutePath();
        Path root =
                module.getParent() != null && Files.exists(module.getParent().resolve("pom.xml"))
                        ? module.getParent()
                        : module;
        Path parent = root.getParent() == null ? root : root.getParent();
        return parent.resolve("shared").resolve("spec-tests").normalize();
    }

    /** Every {@code *.json} under {@code directory}, sorted by path. */
    static List<SpecFile> load(Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            return paths.filter(p -> p.toString().endsWith(".json"))
                    .sorted()
                    .map(p -> read(directory, p))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static SpecFile read(Path directory, Path path) {
        try {
            return new SpecFile(
                    path, directory.relativize(path).toString(), BsonDocument.parse(Files.readString(path)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
