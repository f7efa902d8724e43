package io.github.mongowriteguard.testkit.wire;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * One request of the MongoDB wire protocol, reduced to what a command needs: the database, the command body
 * (OP_MSG document sequences folded into the body as arrays, as the server does) and whether a reply is
 * expected. Supports OP_MSG (2013) and the legacy OP_QUERY on {@code $cmd} (2004), which drivers may use for
 * the first handshake.
 */
public final class WireMessage {
    static final int OP_REPLY = 1;
    static final int OP_QUERY = 2004;
    static final int OP_MSG = 2013;
    private static final int MORE_TO_COME = 1 << 1;
    private static final int CHECKSUM_PRESENT = 1;

    private final int requestId;
    private final int opCode;
    private final String database;
    private final BsonDocument body;
    private final boolean moreToCome;
    private final java.util.Set<String> sequenceFields;
    private int length;

    private WireMessage(
            int requestId,
            int opCode,
            String database,
            BsonDocument body,
            boolean moreToCome,
            java.util.Set<String> sequenceFields) {
        this.requestId = requestId;
        this.opCode = opCode;
        this.database = database;
        this.body = body;
        this.moreToCome = moreToCome;
        this.sequenceFields = sequenceFields;
    }

    /**
     * The fields of {@link #body()} that arrived as OP_MSG document sequences (kind-1 sections), e.g. an insert's
     * {@code documents} as the driver's bulk path sends them. The server's {@code OpMsgRequest} keeps them apart
     * from the body, and {@code currentOp} shows the body only.
     *
     * @return the names of those fields
     */
    public java.util.Set<String> sequenceFields() {
        return sequenceFields;
    }

    /** {@return the command's database ({@code $db})} */
    public String database() {
        return database;
    }

    /** {@return the command document, document sequences folded in} */
    public BsonDocument body() {
        return body;
    }

    /**
     * True for an unacknowledged OP_MSG ({@code w: 0}): the server sends no reply.
     *
     * @return whether the client expects no reply
     */
    public boolean moreToCome() {
        return moreToCome;
    }

    /** {@return the message's length in bytes, header included, as it arrived} */
    public int length() {
        return length;
    }

    /** Reads one message, or returns null at a clean end of stream. */
    static WireMessage read(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        byte[] lengthBytes = new byte[4];
        int first = data.read(lengthBytes, 0, 4);
        if (first < 0) {
            return null;
        }
        if (first < 4) {
            data.readFully(lengthBytes, first, 4 - first);
        }
        int length = ByteBuffer.wrap(lengthBytes).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (length < 16 || length > 64 * 1024 * 1024) {
            throw new IOException("invalid message length " + length);
        }
        byte[] rest = new byte[length - 4];
        try {
            data.readFully(rest);
        } catch (EOFException e) {
            return null;
        }
        ByteBuffer buffer = ByteBuffer.wrap(rest).order(ByteOrder.LITTLE_ENDIAN);
        int requestId = buffer.getInt();
        buffer.getInt(); // responseTo
        int opCode = buffer.getInt();
        WireMessage message = switch (opCode) {
            case OP_MSG -> readOpMsg(requestId, buffer, length);
            case OP_QUERY -> readOpQuery(requestId, buffer);
            default ->
                throw new IOException("unsupported opcode " + opCode + " (the testkit speaks OP_MSG and OP_QUERY)");
        };
        message.length = length;
        return message;
    }

    private static WireMessage readOpMsg(int requestId, ByteBuffer buffer, int length) {
        int flags = buffer.getInt();
        int end = length - 4 - ((flags & CHECKSUM_PRESENT) != 0 ? 4 : 0);
        BsonDocument body = null;
        BsonDocument sequences = new BsonDocument();
        while (buffer.position() < end) {
            byte kind = buffer.get();
            if (kind == 0) {
                body = Bson.decode(buffer);
            } else if (kind == 1) {
                int start = buffer.position();
                int size = buffer.getInt();
                String identifier = readCString(buffer);
                BsonArray documents = new BsonArray();
                while (buffer.position() < start + size) {
                    documents.add(Bson.decode(buffer));
                }
                sequences.put(identifier, documents);
            } else {
                throw new IllegalStateException("unknown OP_MSG section kind " + kind);
            }
        }
        if (body == null) {
            throw new IllegalStateException("OP_MSG without a body section");
        }
        body.putAll(sequences);
        String database = body.containsKey("$db") ? body.getString("$db").getValue() : "admin";
        return new WireMessage(
                requestId,
                OP_MSG,
                database,
                body,
                (flags & MORE_TO_COME) != 0,
                java.util.Set.copyOf(sequences.keySet()));
    }

    private static WireMessage readOpQuery(int requestId, ByteBuffer buffer) {
        buffer.getInt(); // flags
        String fullCollectionName = readCString(buffer);
        buffer.getInt(); // numberToSkip
        buffer.getInt(); // numberToReturn
        BsonDocument query = Bson.decode(buffer);
        String database = fullCollectionName.substring(0, fullCollectionName.indexOf('.'));
        // Legacy commands may be wrapped as {$query: {...}, $readPreference: ...}.
        if (query.containsKey("$query")) {
            query = query.getDocument("$query");
        }
        query.put("$db", new BsonString(database));
        return new WireMessage(requestId, OP_QUERY, database, query, false, java.util.Set.of());
    }

    private static String readCString(ByteBuffer buffer) {
        int start = buffer.position();
        while (buffer.get() != 0) {
            // scan to the terminating zero
        }
        return new String(
                buffer.array(), buffer.arrayOffset() + start, buffer.position() - start - 1, StandardCharsets.UTF_8);
    }

    /** Encodes the reply to this request in the request's own protocol. */
    byte[] encodeReply(int replyId, BsonDocument reply) {
        byte[] document = Bson.encode(reply);
        ByteArrayOutputStream out = new ByteArrayOutputStream(document.length + 64);
        ByteBuffer header;
        if (opCode == OP_MSG) {
            int length = 16 + 4 + 1 + document.length;
            header = ByteBuffer.allocate(21).order(ByteOrder.LITTLE_ENDIAN);
            header.putInt(length)
                    .putInt(replyId)
                    .putInt(requestId)
                    .putInt(OP_MSG)
                    .putInt(0)
                    .put((byte) 0);
        } else {
            int length = 16 + 20 + document.length;
            header = ByteBuffer.allocate(36).order(ByteOrder.LITTLE_ENDIAN);
            header.putInt(length)
                    .putInt(replyId)
                    .putInt(requestId)
                    .putInt(OP_REPLY)
                    .putInt(0)
                    .putLong(0)
                    .putInt(0)
                    .putInt(1);
        }
        out.write(header.array(), 0, header.capacity());
        out.write(document, 0, document.length);
        return out.toByteArray();
    }
}
