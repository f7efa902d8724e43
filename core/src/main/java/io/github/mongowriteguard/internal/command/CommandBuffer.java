package io.github.mongowriteguard.internal.command;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.bson.ByteBuf;
import org.bson.ByteBufNIO;
import org.bson.io.OutputBuffer;
import org.bson.types.ObjectId;

/**
 * The bytes of one command being encoded: a heap buffer that the encoder can size ahead ({@link #reserve}) from what it
 * expects the command to take, so that a large command is allocated about once instead of doubling (and copying) its
 * way up from a small buffer. When the expectation was short it grows by doubling while small, by a quarter above
 * {@link #QUARTER_GROWTH_ABOVE} (the expectation was close, or the command is near its limit anyway).
 */
final class CommandBuffer extends OutputBuffer {
    private static final int QUARTER_GROWTH_ABOVE = 1024 * 1024;

    private ByteBuffer buffer;

    CommandBuffer(int capacity) {
        buffer = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Makes room for {@code capacity} bytes in all, in one allocation, if there is less. */
    void reserve(int capacity) {
        if (capacity > buffer.capacity()) {
            resize(capacity);
        }
    }

    /** The bytes written so far start at 0; the array may be longer. */
    byte[] array() {
        return buffer.array();
    }

    private void ensure(int more) {
        int need = buffer.position() + more;
        if (need > buffer.capacity()) {
            long position = buffer.position();
            long grown = position > QUARTER_GROWTH_ABOVE ? position + position / 4 : 2 * position;
            resize((int) Math.min(Integer.MAX_VALUE - 16, Math.max(need + 128L, grown)));
        }
    }

    private void resize(int capacity) {
        ByteBuffer larger = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
        larger.put(buffer.array(), 0, buffer.position());
        buffer = larger;
    }

    @Override
    public void writeBytes(byte[] bytes, int offset, int length) {
        ensure(length);
        buffer.put(bytes, offset, length);
    }

    @Override
    public void writeByte(int value) {
        ensure(1);
        buffer.put((byte) value);
    }

    /**
     * Writes {@code index} as an array element's name: its decimal digits in ASCII and the terminating byte, as
     * {@code BsonBinaryWriter} names array elements, without making a {@code String} of it.
     */
    void writeArrayIndexName(int index) {
        if (index < 0) {
            throw new IllegalArgumentException("an array index is not negative: " + index);
        }
        int digits = DecimalDigits.count(index);
        ensure(digits + 1);
        byte[] bytes = buffer.array();
        int end = DecimalDigits.write(index, digits, bytes, buffer.position());
        bytes[end] = 0;
        buffer.position(end + 1);
    }

    /**
     * Names and strings as {@code OutputBuffer} writes them (UTF-8, then the terminating byte), straight into the array
     * when every character is ASCII and not the null character, instead of a call per byte; anything else, the null
     * character's refusal included, through {@code OutputBuffer}'s own code.
     */
    @Override
    protected int writeCharacters(String text, boolean checkForNullCharacters) {
        int length = text.length();
        ensure(length + 1);
        byte[] bytes = buffer.array();
        int at = buffer.position();
        for (int i = 0; i < length; i++) {
            char c = text.charAt(i);
            if (c >= 0x80 || c == 0) {
                return super.writeCharacters(text, checkForNullCharacters); // from the start: nothing was counted yet
            }
            bytes[at + i] = (byte) c;
        }
        bytes[at + length] = 0;
        buffer.position(at + length + 1);
        return length + 1;
    }

    @Override
    public void writeInt32(int value) {
        ensure(4);
        buffer.putInt(value);
    }

    @Override
    public void writeInt32(int position, int value) {
        checkWritten(position, 4);
        buffer.putInt(position, value);
    }

    @Override
    public void writeInt64(long value) {
        ensure(8);
        buffer.putLong(value);
    }

    @Override
    public void writeObjectId(ObjectId value) {
        ensure(12);
        value.putToByteBuffer(buffer);
    }

    @Override
    protected void write(int position, int value) {
        checkWritten(position, 1);
        buffer.put(position, (byte) value);
    }

    private void checkWritten(int position, int length) {
        if (position < 0 || position + length > buffer.position()) {
            throw new IllegalArgumentException(
                    "position " + position + " is outside the " + buffer.position() + " bytes written");
        }
    }

    @Override
    public int getPosition() {
        return buffer.position();
    }

    @Override
    public int getSize() {
        return buffer.position();
    }

    @Override
    public void truncateToPosition(int newPosition) {
        if (newPosition < 0 || newPosition > buffer.position()) {
            throw new IllegalArgumentException("cannot truncate " + buffer.position() + " bytes to " + newPosition);
        }
        buffer.position(newPosition);
    }

    @Override
    public int pipe(OutputStream out) throws IOException {
        out.write(buffer.array(), 0, buffer.position());
        return buffer.position();
    }

    @Override
    public List<ByteBuf> getByteBuffers() {
        return List.of(new ByteBufNIO(ByteBuffer.wrap(buffer.array(), 0, buffer.position())));
    }
}
