package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.InsertOneOptions;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.bulk.WriteKind;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The guard reads every option of the driver's write models, and knows of every getter the driver has. */
class WriteRecordTest {

    /**
     * Fails when a driver version adds a getter to a model or option class (a new option): handle it in
     * {@link WriteRecord} (send it as the driver does, or refuse it) and list it in {@code READ_BY_THE_GUARD}.
     */
    @Test
    void everyGetterOfTheDriversModelAndOptionClasses_isListedWithWhatTheGuardDoesWithIt() {
        List<Class<?>> classes = List.of(
                InsertOneModel.class,
                ReplaceOneModel.class,
                UpdateOneModel.class,
                UpdateManyModel.class,
                DeleteOneModel.class,
                DeleteManyModel.class,
                ReplaceOptions.class,
                UpdateOptions.class,
                DeleteOptions.class,
                BulkWriteOptions.class,
                InsertManyOptions.class,
                InsertOneOptions.class);

        assertThat(WriteRecord.READ_BY_THE_GUARD.keySet()).containsExactlyInAnyOrderElementsOf(classes);
        for (Class<?> type : classes) {
            assertThat(new TreeSet<>(WriteRecord.READ_BY_THE_GUARD.get(type).keySet()))
                    .as("getters of %s", type.getSimpleName())
                    .isEqualTo(getters(type));
        }
    }

    @Test
    void updateOne_readsEveryOptionTheDriverSendsInABulk() {
        Collation collation = Collation.builder().locale("fr").build();
        UpdateOptions options = new UpdateOptions()
                .upsert(true)
                .collation(collation)
                .hint(new Document("k", 1))
                .arrayFilters(List.of(Filters.eq("e.x", 1)))
                .sort(Sorts.ascending("k"));

        WriteRecord<Document> write =
                WriteRecord.of(new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("v", 1), options));

        assertThat(write.kind()).isEqualTo(WriteKind.UPDATE_ONE);
        assertThat(write.upsert()).isTrue();
        assertThat(write.collation()).isEqualTo(collation);
        assertThat(write.hint()).isEqualTo(new Document("k", 1));
        assertThat(write.arrayFilters()).hasSize(1);
        assertThat(write.sort()).isNotNull();
    }

    @Test
    void updateMany_neverCarriesASort_asTheDriverNeverSendsOne() {
        WriteRecord<Document> write = WriteRecord.of(new UpdateManyModel<>(
                Filters.eq("k", 1), Updates.set("v", 1), new UpdateOptions().sort(Sorts.ascending("k"))));

        assertThat(write.sort()).isNull();
    }

    private static Set<String> getters(Class<?> type) {
        Set<String> names = new TreeSet<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method method : c.getDeclaredMethods()) {
                boolean getter =
                        (method.getName().startsWith("get") || method.getName().startsWith("is"))
                                && method.getParameterCount() == 0;
                if (getter
                        && Modifier.isPublic(method.getModifiers())
                        && !Modifier.isStatic(method.getModifiers())
                        && !method.isSynthetic()) {
                    names.add(method.getName());
                }
            }
        }
        return names;
    }
}
