package io.github.mongowriteguard.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;
import org.bson.Document;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Image;
import org.commonmark.node.Link;
import org.commonmark.parser.Parser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built plugin archive as a user installs it: unpacked into a directory that is a Connect worker's
 * {@code plugin.path}, the worker a JVM of its own whose class path holds Kafka and its dependencies but neither the
 * guarded sink, the official sink nor the MongoDB driver (checked before it starts). The connector is created by its
 * {@code connector.class}, so Connect loads it, the official sink and the driver from the archive's {@code lib/} in
 * one plugin class loader; records written show the archive's layout works and that the guarded sink's class placed in
 * the official sink's package ({@code OfficialSinkProcessing}) reaches the official classes under plugin isolation.
 * Runs in the {@code integration-test} phase, after {@code package} built the archive (the module's pom). The
 * archive's {@code README.md} (docs/kafka-connect.md) is read there too, outside the repository: each of its relative
 * links must lead to a file of the archive.
 */
class PluginArchiveIT {
    private static final int RECORDS = 50;

    @Test
    void theArchive_unpackedIntoPluginPath_writesRecords_withoutTheConnectorOnTheWorkersClassPath(@TempDir Path dir)
            throws Exception {
        Path archive = archive();
        Path plugins = dir.resolve("plugins");
        unzip(archive, plugins);
        assertThat(pluginDirectory(archive, plugins).resolve("lib"))
                .isDirectoryContaining(p -> p.getFileName().toString().startsWith("mongo-kafka-connect-"))
                .isDirectoryContaining(p -> p.getFileName().toString().startsWith("mongo-write-guard-kafka-connect-"));

        List<String> workerClassPath = workerClassPath();
        assertNotLoadable(
                workerClassPath,
                "io.github.mongowriteguard.kafka.connect.GuardedMongoSinkConnector",
                "com.mongodb.kafka.connect.MongoSinkConnector",
                "com.mongodb.kafka.connect.sink.OfficialSinkProcessing",
                "com.mongodb.client.MongoClient");

        EmbeddedKafkaCluster kafka = new EmbeddedKafkaCluster(1, new Properties());
        kafka.start();
        Process worker = null;
        Path log = Path.of("target", "plugin-archive-worker.log");
        try (EmulatedShardedCluster mongo = EmulatedCluster.sharded().shards(2).start();
                MongoClient client = MongoClients.create(mongo.connectionString())) {
            mongo.shardCollection("plugin.events", ConnectHarness.HASHED_ID);
            kafka.createTopic("plugin", 2);
            for (int i = 0; i < RECORDS; i++) {
                kafka.produce("plugin", i % 2, "k" + i, "{\"_id\": \"k" + i + "\", \"n\": " + i + "}");
            }
            Path workerProperties = write(
                    dir.resolve("worker.properties"),
                    "bootstrap.servers=" + kafka.bootstrapServers(),
                    "plugin.path=" + plugins.toAbsolutePath(),
                    "listeners=http://127.0.0.1:0",
                    "offset.storage.file.filename=" + dir.resolve("offsets").toAbsolutePath(),
                    "offset.flush.interval.ms=500",
                    "key.converter=org.apache.kafka.connect.storage.StringConverter",
                    "value.converter=org.apache.kafka.connect.json.JsonConverter",
                    "value.converter.schemas.enable=false");
            Path connector = write(
                    dir.resolve("sink.properties"),
                    "name=plugin-sink",
                    "connector.class=io.github.mongowriteguard.kafka.connect.GuardedMongoSinkConnector",
                    "tasks.max=1",
                    "topics=plugin",
                    "connection.uri=" + mongo.connectionString(),
                    "database=plugin",
                    "collection=events",
                    "document.id.strategy=com.mongodb.kafka.connect.sink.processor.id.strategy.ProvidedInValueStrategy");
            Files.createDirectories(log.getParent());
            worker = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-cp",
                            String.join(File.pathSeparator, workerClassPath),
                            "org.apache.kafka.connect.cli.ConnectStandalone",
                            workerProperties.toString(),
                            connector.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();

            Instant deadline = Instant.now().plusSeconds(120);
            long written = 0;
            while (worker.isAlive() && Instant.now().isBefore(deadline)) {
                written = client.getDatabase("plugin").getCollection("events").countDocuments();
                if (written == RECORDS) {
                    break;
                }
                Thread.sleep(200);
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(written)
                    .as("documents written by the worker; its log: %s", log)
                    .isEqualTo(RECORDS);
            assertThat(client.getDatabase("plugin")
                            .getCollection("events")
                            .find(new Document("_id", "k7"))
                            .first())
                    .isEqualTo(new Document("_id", "k7").append("n", 7L));
            // Connect loaded the connector from the unpacked archive, in the plugin's own class loader
            assertThat(output)
                    .contains("Added plugin '" + ConnectHarness.GUARDED + "'")
                    .contains("Registered loader: PluginClassLoader{pluginLocation=file:" + plugins.toAbsolutePath()
                            + "/mongo-write-guard-kafka-connect-");
        } finally {
            if (worker != null) {
                worker.destroy();
                if (!worker.waitFor(30, TimeUnit.SECONDS)) {
                    worker.destroyForcibly();
                }
            }
            kafka.stop();
        }
    }

    @Test
    void theArchivesReadme_linksOnlyToTheWebOrToFilesOfTheArchive(@TempDir Path dir) throws IOException {
        Path archive = archive();
        unzip(archive, dir);
        Path plugin = pluginDirectory(archive, dir);
        Path readme = plugin.resolve("README.md");
        assertThat(readme).as("the archive's README.md").isRegularFile();

        assertThat(linksOutside(plugin, readme))
                .as("relative links of the archive's README.md (docs/kafka-connect.md) to files the archive does not"
                        + " hold: a reader of the unpacked archive cannot follow them; link to the repository's URL"
                        + " (the root pom's <scm><url>) instead")
                .isEmpty();
    }

    @Test
    void aRelativeLinkOutsideTheArchive_isReported_theWebAnchorsCodeAndTheArchivesFilesAreNot(@TempDir Path plugin)
            throws IOException {
        Files.writeString(plugin.resolve("LICENSE"), "licence");
        Path readme = Files.writeString(plugin.resolve("README.md"), """
                # Title

                [ok](LICENSE) [ok](./LICENSE#section) [ok](#title) [ok](https://example.com/docs/lab.md)
                [ok](HTTP://example.com) `[code, not a link](docs/lab.md)` ![ok](LICENSE "a title")
                [outside](docs/lab.md) [outside](../README.md#modes) ![outside](docs/img.png) [outside][ref]
                [outside](/etc/hosts)

                ```
                [code, not a link](docs/testkit.md)
                ```

                [ref]: docs/guarantees.md
                """);

        assertThat(linksOutside(plugin, readme))
                .containsExactly(
                        "docs/lab.md", "../README.md#modes", "docs/img.png", "docs/guarantees.md", "/etc/hosts");
    }

    /** The plugin archive {@code mvn package} built: {@code -Dplugin.archive}, set by the module's pom. */
    private static Path archive() {
        String archiveProperty = System.getProperty("plugin.archive");
        assertThat(archiveProperty)
                .as("-Dplugin.archive (set by the module's pom)")
                .isNotBlank();
        Path archive = Path.of(archiveProperty);
        assertThat(archive).as("the plugin archive (mvn package builds it)").isRegularFile();
        return archive;
    }

    /** The archive's one top directory, {@code mongo-write-guard-kafka-connect-<version>}, unpacked into a directory. */
    private static Path pluginDirectory(Path archive, Path unpackedInto) {
        return unpackedInto.resolve(archive.getFileName().toString().replace("-plugin.zip", ""));
    }

    /**
     * The destinations of a markdown file's links and images (as CommonMark reads them: code is not a link, reference
     * links included) that are neither {@code http(s):} nor an anchor of the file and do not name a file inside
     * {@code root}, in the order they appear.
     */
    private static List<String> linksOutside(Path root, Path markdown) throws IOException {
        List<String> destinations = new ArrayList<>();
        Parser.builder().build().parse(Files.readString(markdown)).accept(new AbstractVisitor() {
            @Override
            public void visit(Link link) {
                destinations.add(link.getDestination());
                visitChildren(link);
            }

            @Override
            public void visit(Image image) {
                destinations.add(image.getDestination());
                visitChildren(image);
            }
        });
        List<String> outside = new ArrayList<>();
        for (String destination : destinations) {
            String lower = destination.toLowerCase(Locale.ROOT);
            if (lower.startsWith("http://") || lower.startsWith("https://") || destination.startsWith("#")) {
                continue;
            }
            String path =
                    URLDecoder.decode(destination.split("[#?]", 2)[0].replace("+", "%2B"), StandardCharsets.UTF_8);
            Path target = markdown.getParent().resolve(path).normalize();
            if (!target.startsWith(root) || !Files.exists(target)) {
                outside.add(destination);
            }
        }
        return outside;
    }

    /**
     * This JVM's test class path without the module's own classes, the guard, the MongoDB driver and the official
     * sink, and without the emulator and the markdown parser: Kafka, Connect's runtime and their dependencies.
     */
    private static List<String> workerClassPath() {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> kept = new ArrayList<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            String path = entry.replace('\\', '/');
            boolean excluded = path.contains("/target/")
                    || path.contains("/io/github/mongowriteguard/")
                    || path.contains("/org/mongodb/")
                    || path.contains("/de/bwaldvogel/")
                    || path.contains("/org/commonmark/") // this test's markdown parser
                    || path.contains("surefire")
                    || path.endsWith("-test.jar"); // Kafka's test jars: plugins of their own, not a worker's
            if (!excluded && !entry.isBlank()) {
                kept.add(entry);
            }
        }
        assertThat(kept).as("the worker's class path").anyMatch(e -> e.contains("connect-runtime"));
        return kept;
    }

    private static void assertNotLoadable(List<String> classPath, String... classNames) throws IOException {
        URL[] urls = classPath.stream()
                .map(entry -> {
                    try {
                        return Path.of(entry).toUri().toURL();
                    } catch (java.net.MalformedURLException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .toArray(URL[]::new);
        try (URLClassLoader loader = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
            assertThat(loader.loadClass("org.apache.kafka.connect.cli.ConnectStandalone"))
                    .isNotNull();
            for (String name : classNames) {
                assertThatThrownBy(() -> loader.loadClass(name))
                        .as("%s on the worker's class path", name)
                        .isInstanceOf(ClassNotFoundException.class);
            }
        } catch (ClassNotFoundException e) {
            throw new AssertionError("the worker's class path has no Connect runtime: " + Arrays.toString(urls), e);
        }
    }

    private static void unzip(Path archive, Path into) throws IOException {
        try (InputStream in = Files.newInputStream(archive);
                ZipInputStream zip = new ZipInputStream(in)) {
            for (ZipEntry entry; (entry = zip.getNextEntry()) != null; ) {
                Path target = into.resolve(entry.getName()).normalize();
                if (!target.startsWith(into)) {
                    throw new IOException("an entry outside the directory: " + entry.getName());
                }
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                } else {
                    Files.createDirectories(target.getParent());
                    Files.copy(zip, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static Path write(Path file, String... lines) throws IOException {
        return Files.write(file, Arrays.asList(lines), StandardCharsets.UTF_8);
    }
}
