package io.github.mongowriteguard.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link of README.md and docs/*.md leads somewhere: the file exists, and an anchor ({@code #...}) is a
 * heading of that file as GitHub names it (lower case, punctuation dropped, spaces as hyphens, {@code -1}, {@code -2}
 * for repeated headings) or an {@code <a id>} in it. Links inside code blocks and code spans are text, not links;
 * {@code http(s):} and {@code mailto:} links are not followed.
 */
class DocumentationLinksTest {
    private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern CODE_SPAN = Pattern.compile("`+[^`]*`+");

    @Test
    void everyRelativeLinkAndAnchor_ofTheReadmeAndDocs_resolves() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        List<Path> files = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }

        List<String> broken = brokenLinks(files);

        assertThat(broken).as("broken links in %s", files).isEmpty();
        assertThat(links(Files.readString(root.resolve("README.md"))))
                .as("the README links into docs/")
                .anyMatch(link -> link.startsWith("docs/"));
    }

    @Test
    void aMissingFile_aMissingAnchor_areReported_linksInCodeAreNot(@TempDir Path dir) throws IOException {
        Path readme = dir.resolve("README.md");
        Files.createDirectories(dir.resolve("docs"));
        Files.writeString(
                dir.resolve("docs/guide.md"),
                "# Guide\n\n## Every `MongoTemplate` write, guarded\n\n## Notes\n\n## Notes\n\n<a id=\"kept\"></a>\n");
        Files.writeString(readme, """
                # Title

                ## What's guarded (in short)

                [ok](docs/guide.md#every-mongotemplate-write-guarded) [ok](docs/guide.md#notes-1) [ok](#whats-guarded-in-short)
                [ok](docs/guide.md#kept) [ok](docs/) [ok](https://example.com/x#y) `[not a link](nowhere.md)`
                [no file](docs/missing.md) [no anchor](docs/guide.md#notes-2) [no heading](#title-1)

                ```java
                // [not a link](nowhere.md)
                # not a heading
                ```
                """);

        assertThat(brokenLinks(List.of(readme)))
                .containsExactly(
                        "README.md: docs/missing.md (no such file)",
                        "README.md: docs/guide.md#notes-2 (no such anchor)",
                        "README.md: #title-1 (no such anchor)");
    }

    /** Each broken link as {@code file: link (why)}, in the order found. */
    private static List<String> brokenLinks(List<Path> files) throws IOException {
        Map<Path, Set<String>> anchors = new HashMap<>();
        List<String> broken = new ArrayList<>();
        for (Path file : files) {
            for (String link : links(Files.readString(file))) {
                if (link.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue; // http:, https:, mailto:
                }
                int hash = link.indexOf('#');
                String path = hash < 0 ? link : link.substring(0, hash);
                Path target =
                        path.isEmpty() ? file : file.getParent().resolve(path).normalize();
                String name = file.getFileName().toString();
                if (!Files.exists(target)) {
                    broken.add(name + ": " + link + " (no such file)");
                } else if (hash >= 0) {
                    Set<String> known = anchors.computeIfAbsent(target, DocumentationLinksTest::anchorsOf);
                    if (!known.contains(link.substring(hash + 1))) {
                        broken.add(name + ": " + link + " (no such anchor)");
                    }
                }
            }
        }
        return broken;
    }

    /** The link targets of a markdown text, code blocks and code spans left out. */
    private static List<String> links(String markdown) {
        List<String> links = new ArrayList<>();
        for (String line : prose(markdown)) {
            Matcher matcher = LINK.matcher(CODE_SPAN.matcher(line).replaceAll(""));
            while (matcher.find()) {
                links.add(matcher.group(1));
            }
        }
        return links;
    }

    /** The anchors GitHub gives a markdown file's headings, and its {@code <a id>}s. */
    private static Set<String> anchorsOf(Path file) {
        String markdown;
        try {
            markdown = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : prose(markdown)) {
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(2));
                int repeat = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(repeat == 0 ? slug : slug + "-" + repeat);
            }
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) {
                anchors.add(html.group(1));
            }
        }
        return anchors;
    }

    /** GitHub's anchor of a heading: link targets dropped, lower case, punctuation removed, spaces as hyphens. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1");
        return text.toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N}\\s_-]", "")
                .replace(' ', '-');
    }

    /** The lines of a markdown text outside fenced code blocks. */
    private static List<String> prose(String markdown) {
        List<String> lines = new ArrayList<>();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
            } else if (!fenced) {
                lines.add(line);
            }
        }
        return lines;
    }
}
