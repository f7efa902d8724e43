package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.internal.bulk.WriteRequest;
import io.github.mongowriteguard.bulk.WriteKind;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The request type each kind travels as is the driver's: driver-core {@code Operations.bulkWrite} turns
 * {@code InsertOneModel} into an {@code InsertRequest}, {@code ReplaceOneModel} into an {@code UpdateRequest} of type
 * {@code REPLACE}, {@code UpdateOneModel}/{@code UpdateManyModel} into one of type {@code UPDATE} and
 * {@code DeleteOneModel}/{@code DeleteManyModel} into a {@code DeleteRequest}; {@code BulkWriteBatch} puts each type in
 * its own command. The plan's key runs and the encoder's commands are both split by {@link WriteKind#requestType}.
 */
class WriteKindTest {
    @Test
    void requestTypes_areTheDrivers() {
        assertThat(Arrays.stream(WriteKind.RequestType.values()).map(Enum::name))
                .containsExactlyElementsOf(Arrays.stream(WriteRequest.Type.values())
                        .map(Enum::name)
                        .toList());
        Map<WriteKind, WriteRequest.Type> drivers = Map.of(
                WriteKind.INSERT_ONE, WriteRequest.Type.INSERT,
                WriteKind.REPLACE_ONE, WriteRequest.Type.REPLACE,
                WriteKind.UPDATE_ONE, WriteRequest.Type.UPDATE,
                WriteKind.UPDATE_MANY, WriteRequest.Type.UPDATE,
                WriteKind.DELETE_ONE, WriteRequest.Type.DELETE,
                WriteKind.DELETE_MANY, WriteRequest.Type.DELETE);
        for (WriteKind kind : WriteKind.values()) {
            assertThat(kind.requestType().name())
                    .as(kind.name())
                    .isEqualTo(drivers.get(kind).name());
        }
    }
}
