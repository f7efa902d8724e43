import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes a fresh Spring Boot project that follows the README's quick start word for word: the dependency XML of its
 * step 2 and the test of its step 4, taken from README.md (so the README cannot drift from what works), with only
 * what the README leaves to the reader around them (the Spring Boot parent, an application class, the imports).
 *
 * <pre>java .ci/QuickStartProject.java README.md pom.xml TARGET_DIR</pre>
 *
 * Fails (exit 1) when the README's quick start lacks a block, or names another version than the root pom's.
 * Runs as a single-file source program: a fresh machine has only a JDK and Maven.
 */
public final class QuickStartProject {
    public static void main(String[] args) throws IOException {
        String readme = Files.readString(Path.of(args[0]));
        String rootPom = Files.readString(Path.of(args[1]));
        Path target = Path.of(args[2]);

        String quickStart = section(readme, "## Quick start with Spring Boot");
        String xml = block(quickStart, "xml");
        String test = block(quickStart, "java");
        String version = first(rootPom, "<artifactId>mongo-write-guard-parent</artifactId>\\s*<version>([^<]+)</version>");
        String bootVersion = first(rootPom, "<spring-boot.version>([^<]+)</spring-boot.version>");
        if (!xml.contains("<mongo-write-guard.version>" + version + "</mongo-write-guard.version>")) {
            fail("the quick start's XML does not use the project version " + version + " (root pom.xml)");
        }
        if (!quickStart.contains("`" + version + "`")) {
            fail("the quick start does not tell the version to use (" + version + ")");
        }

        String pom = """
                <?xml version="1.0" encoding="UTF-8"?>
                <project xmlns="http://maven.apache.org/POM/4.0.0"
                         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
                  <modelVersion>4.0.0</modelVersion>
                  <!-- The README's quick start: "With the Spring Boot parent nothing else is needed". -->
                  <parent>
                    <groupId>org.springframework.boot</groupId>
                    <artifactId>spring-boot-starter-parent</artifactId>
                    <version>%s</version>
                    <relativePath/>
                  </parent>
                  <groupId>com.example</groupId>
                  <artifactId>quickstart-shop</artifactId>
                  <version>1.0.0</version>
                %s
                </project>
                """.formatted(bootVersion, xml.replace("<properties>", "<properties>\n  <java.version>17</java.version>"));
        Path main = target.resolve("src/main/java/com/example/shop");
        Path tests = target.resolve("src/test/java/com/example/shop");
        Files.createDirectories(main);
        Files.createDirectories(tests);
        Files.writeString(target.resolve("pom.xml"), pom);
        Files.writeString(main.resolve("ShopApplication.java"), """
                package com.example.shop;

                import org.springframework.boot.SpringApplication;
                import org.springframework.boot.autoconfigure.SpringBootApplication;

                @SpringBootApplication
                public class ShopApplication {
                    public static void main(String[] args) {
                        SpringApplication.run(ShopApplication.class, args);
                    }
                }
                """);
        String className = first(test, "class (\\w+)");
        Files.writeString(tests.resolve(className + ".java"), """
                package com.example.shop;

                import static org.assertj.core.api.Assertions.assertThat;
                import static org.springframework.data.mongodb.core.query.Criteria.where;
                import static org.springframework.data.mongodb.core.query.Query.query;

                import io.github.mongowriteguard.test.EmulatedMongo;
                import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
                import io.github.mongowriteguard.test.EmulatedMongoCluster;
                import org.bson.Document;
                import org.junit.jupiter.api.Test;
                import org.springframework.beans.factory.annotation.Autowired;
                import org.springframework.boot.test.context.SpringBootTest;
                import org.springframework.data.mongodb.core.BulkOperations;
                import org.springframework.data.mongodb.core.BulkOperations.BulkMode;
                import org.springframework.data.mongodb.core.FindAndReplaceOptions;
                import org.springframework.data.mongodb.core.MongoTemplate;

                """ + test + "\n");
        System.out.println("quick start project written to " + target + " (mongo-write-guard " + version
                + ", Spring Boot " + bootVersion + ", test " + className + ")");
    }

    private static String section(String markdown, String heading) {
        int start = markdown.indexOf("\n" + heading + "\n");
        if (start < 0) {
            fail("README.md has no section '" + heading + "'");
        }
        int end = markdown.indexOf("\n## ", start + heading.length() + 1);
        return markdown.substring(start, end < 0 ? markdown.length() : end);
    }

    private static String block(String markdown, String language) {
        return first(markdown, "(?s)```" + language + "\n(.*?)```");
    }

    private static String first(String text, String regex) {
        Matcher matcher = Pattern.compile(regex).matcher(text);
        if (!matcher.find()) {
            fail("not found: " + regex);
        }
        return matcher.group(1);
    }

    private static void fail(String message) {
        System.err.println("quick start: " + message);
        System.exit(1);
    }
}
