package io.github.mongowriteguard.spring.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The public API of each published module, held against a snapshot checked in under {@code docs/api/}: a new, changed
 * or removed public type, method, constructor or field outside the {@code internal} packages is a visible, reviewed
 * change (the snapshot's diff), never an accident. This module's tests see all four published modules' classes, so the
 * check lives here. Also checked: every public top-level interface says in its javadoc who implements it ("Implemented
 * by applications" or "Implemented by the library only"), and the snapshot carries that mark.
 *
 * <p>To accept an intended change, run with {@code -Dapi.snapshot.update=true} and commit the snapshot files.
 */
class PublicApiSnapshotTest {
    private static final Pattern MARK = Pattern.compile("Implemented by (applications|the library only)");

    /** Each published module, by a class of its own (whose classes directory or jar is the module's). */
    static Stream<Arguments> modules() {
        return Stream.of(
                Arguments.of("core", WriteGuard.class),
                Arguments.of("testkit", EmulatedCluster.class),
                Arguments.of("test-support", EmulatedMongo.class),
                Arguments.of("spring-adapter", GuardedMongoTemplate.class));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("modules")
    void publicApi_matchesTheCheckedInSnapshot(String module, Class<?> marker) throws Exception {
        Path root = repositoryRoot();
        JavaClasses classes = new ClassFileImporter()
                .importUrl(marker.getProtectionDomain().getCodeSource().getLocation());
        String actual = snapshot(classes, root.resolve(module).resolve("src/main/java"));
        Path file = root.resolve("docs/api").resolve(module + ".txt");
        if (Boolean.getBoolean("api.snapshot.update")) {
            Files.createDirectories(file.getParent());
            Files.writeString(file, actual, StandardCharsets.UTF_8);
        }
        String expected = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        assertThat(actual)
                .as(
                        "the public API of %s differs from %s: if the change is intended, update the snapshot"
                                + " (mvn -o -pl spring-adapter test -Dtest=PublicApiSnapshotTest -Dapi.snapshot.update=true)"
                                + " and commit it, so that reviewers see the API change",
                        module, root.relativize(file))
                .isEqualTo(expected);
    }

    /** One line per exported type (by name), then one indented line per public or protected member, sorted. */
    static String snapshot(JavaClasses classes, Path sources) throws IOException {
        Map<String, String> types = new TreeMap<>(); // by type name
        for (JavaClass type : classes) {
            if (!isExported(type) || type.getPackageName().contains(".internal")) {
                continue;
            }
            StringBuilder entry = new StringBuilder(header(type, sources)).append('\n');
            Set<String> members = new TreeSet<>();
            for (JavaCodeUnit unit : type.getCodeUnits()) {
                if (visible(unit.getModifiers())
                        && !unit.getModifiers().contains(JavaModifier.SYNTHETIC)
                        && !unit.getModifiers().contains(JavaModifier.BRIDGE)) {
                    members.add(modifiers(unit.getModifiers())
                            + (unit.isConstructor() ? "" : name(unit.getReturnType()) + " ")
                            + (unit.isConstructor() ? "<init>" : unit.getName())
                            + unit.getParameterTypes().stream()
                                    .map(PublicApiSnapshotTest::name)
                                    .collect(Collectors.joining(", ", "(", ")")));
                }
            }
            for (JavaField field : type.getFields()) {
                if (visible(field.getModifiers()) && !field.getModifiers().contains(JavaModifier.SYNTHETIC)) {
                    members.add(modifiers(field.getModifiers()) + name(field.getType()) + " " + field.getName());
                }
            }
            members.forEach(m -> entry.append("  ").append(m).append('\n'));
            types.put(type.getName(), entry.toString());
        }
        return String.join("", types.values());
    }

    private static String header(JavaClass type, Path sources) throws IOException {
        String kind = type.isAnnotation()
                ? "@interface"
                : type.isInterface()
                        ? "interface"
                        : type.isEnum()
                                ? "enum"
                                : type.getRawSuperclass()
                                                .map(s -> s.getName().equals("java.lang.Record"))
                                                .orElse(false)
                                        ? "record"
                                        : "class";
        List<String> supertypes = new ArrayList<>();
        type.getRawSuperclass()
                .filter(s -> !List.of("java.lang.Object", "java.lang.Record", "java.lang.Enum")
                        .contains(s.getName()))
                .ifPresent(s -> supertypes.add("extends " + s.getName()));
        type.getInterfaces().forEach(i -> supertypes.add("implements " + name(i)));
        String mark = "";
        if (type.isInterface() && !type.isAnnotation() && type.isTopLevelClass()) {
            mark = " [" + implementer(type, sources) + "]";
        }
        Set<JavaModifier> modifiers = new TreeSet<>(type.getModifiers());
        if (type.isInterface()) {
            modifiers.remove(JavaModifier.ABSTRACT); // every interface is
        }
        return modifiers(modifiers) + kind + " " + type.getName()
                + (supertypes.isEmpty() ? "" : " " + String.join(" ", supertypes)) + mark;
    }

    /** Who implements a public interface, as its javadoc says; the check fails when it says nothing. */
    private static String implementer(JavaClass type, Path sources) throws IOException {
        Path source = sources.resolve(type.getName().replace('.', '/') + ".java");
        String text = Files.readString(source, StandardCharsets.UTF_8);
        int declaration = text.indexOf("interface " + type.getSimpleName());
        int comment = text.lastIndexOf("/**", declaration);
        Matcher mark = MARK.matcher(comment < 0 ? "" : text.substring(comment, declaration));
        assertThat(mark.find())
                .as(
                        "the javadoc of public interface %s says who implements it: add \"Implemented by applications.\""
                                + " (a user may implement it; methods are added only with defaults) or \"Implemented by the"
                                + " library only.\" (users call it; it may gain methods)",
                        type.getName())
                .isTrue();
        return mark.group();
    }

    private static boolean isExported(JavaClass type) {
        for (JavaClass t = type; t != null; t = t.getEnclosingClass().orElse(null)) {
            if (!t.getModifiers().contains(JavaModifier.PUBLIC) || t.isAnonymousClass() || t.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    private static boolean visible(Set<JavaModifier> modifiers) {
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
    }

    private static String modifiers(Set<JavaModifier> modifiers) {
        StringBuilder out = new StringBuilder();
        for (JavaModifier modifier : new TreeSet<>(modifiers)) {
            if (modifier != JavaModifier.SYNTHETIC
                    && modifier != JavaModifier.BRIDGE
                    && modifier != JavaModifier.VOLATILE
                    && modifier != JavaModifier.TRANSIENT) {
                out.append(modifier.name().toLowerCase(java.util.Locale.ROOT)).append(' ');
            }
        }
        return out.toString();
    }

    private static String name(JavaType type) {
        return type.getName();
    }

    private static Path repositoryRoot() {
        Path here = Path.of("").toAbsolutePath();
        return Files.exists(here.resolve("docs")) ? here : here.getParent();
    }
}
