package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonSerializationException;
import org.bson.io.BasicOutputBuffer;
import org.junit.jupiter.api.Test;

/** The guard's command buffer writes names, strings and array index names as the driver's {@code OutputBuffer} does. */
class CommandBufferTest {
    private static final List<String> TEXTS = List.of(
            "",
            "q",
            "productId",
            "x".repeat(3_000),
            "caf\u00e9",
            "\u65e5\u672c",
            "emoji \ud83d\ude00 here",
            "\u007f\u0080",
            "tail \u00ff");

    @Test
    void namesAndStrings_areTheBytesOfBasicOutputBuffer() {
        for (String text : TEXTS) {
            CommandBuffer guard = new CommandBuffer(2); // grows while writing
            BasicOutputBuffer driver = new BasicOutputBuffer(2);
            guard.writeByte(1);
            driver.writeByte(1);
            guard.writeCString(text);
            driver.writeCString(text);
            guard.writeString(text);
            driver.writeString(text);
            assertThat(Arrays.copyOf(guard.array(), guard.getPosition()))
                    .as("%s", text)
                    .isEqualTo(driver.toByteArray());
        }
    }

    @Test
    void aNullCharacter_isRefusedInAName_andWrittenInAString_asTheDriverDoes() {
        CommandBuffer guard = new CommandBuffer(16);
        assertThatThrownBy(() -> guard.writeCString("a\0b"))
                .isInstanceOf(BsonSerializationException.class)
                .hasMessageContaining("null character");
        CommandBuffer strings = new CommandBuffer(16);
        BasicOutputBuffer driver = new BasicOutputBuffer(16);
        strings.writeString("a\0b");
        driver.writeString("a\0b");
        assertThat(Arrays.copyOf(strings.array(), strings.getPosition())).isEqualTo(driver.toByteArray());
    }

    @Test
    void anIndexName_isItsDecimalDigits_andATerminator_asBsonBinaryWriterNamesIt() {
        int[] indexes = {0, 1, 9, 10, 99, 100, 999, 1_000, 1_001, 9_999, 10_000, 99_999, 100_000, 123_456_789};
        for (int index : indexes) {
            CommandBuffer buffer = new CommandBuffer(4);
            buffer.writeByte(7);
            buffer.writeArrayIndexName(index);
            byte[] name = (Integer.toString(index) + '\0').getBytes(StandardCharsets.US_ASCII);
            assertThat(Arrays.copyOfRange(buffer.array(), 1, buffer.getPosition()))
                    .as("index %d", index)
                    .isEqualTo(name);
        }
        CommandBuffer max = new CommandBuffer(1);
        max.writeArrayIndexName(Integer.MAX_VALUE);
        assertThat(new String(max.array(), 0, max.getPosition() - 1, StandardCharsets.US_ASCII))
                .isEqualTo(Integer.toString(Integer.MAX_VALUE));
    }
}
