package io.github.mongowriteguard.spring.data;

import java.util.Objects;
import org.springframework.data.annotation.Id;
import org.springframework.data.annotation.Version;
import org.springframework.data.mongodb.core.mapping.Document;
import org.springframework.data.mongodb.core.mapping.Field;

/** The entities the template tests write: explicit ids, generated ids, and {@code @Version}. */
final class TemplateEntities {
    private TemplateEntities() {}

    @Document("items")
    record Item(@Id String id, @Field("q") int qty, String name) {}

    /** An id the driver generates (an ObjectId, read back as its hex string). */
    @Document("auto")
    static final class Auto {
        @Id
        String id;

        String name;

        Auto() {}

        Auto(String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return "Auto{" + id + ", " + name + '}';
        }
    }

    /** Optimistic locking: Spring puts the version in the filter of a save and increments it. */
    @Document("versioned")
    static final class Versioned {
        @Id
        String id;

        String name;

        @Version
        Long version;

        Versioned() {}

        Versioned(String id, String name, Long version) {
            this.id = id;
            this.name = name;
            this.version = version;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Versioned v
                    && Objects.equals(id, v.id)
                    && Objects.equals(name, v.name)
                    && Objects.equals(version, v.version);
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, name, version);
        }

        @Override
        public String toString() {
            return "Versioned{" + id + ", " + name + ", v" + version + '}';
        }
    }
}
