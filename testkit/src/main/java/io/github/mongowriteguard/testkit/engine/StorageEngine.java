package io.github.mongowriteguard.testkit.engine;

import java.util.concurrent.locks.ReentrantLock;

import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;

import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.github.mongowriteguard.testkit.wire.Bson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * The storage and query engine behind an emulated node: mongo-java-server's in-memory backend. Everything the
 * engine does not model (sessions, fail points, deadlines, replica-set identity) is added in front of it by the
 * node; this class only translates BSON between the driver's types and the engine's, and runs one command at a
 * time, like a single global write lock.
 */
public final class StorageEngine implements AutoCloseable {
    private final MemoryBackend backend = new MemoryBackend();
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final ReentrantLock lock = new ReentrantLock();

    /**
     * Runs a command that carries no session, deadline or routing fields (the node removed them). Engine errors
     * become the server's error reply ({@code ok: 0, code, codeName, errmsg}).
     *
     * @param database the database
     * @param command  the command
     * @return the reply
     */
    public BsonDocument run(String database, BsonDocument command) {
        String name = command.getFirstKey();
        Document engineCommand = toEngine(command);
        lock.lock();
        try {
            return fromEngine(backend.handleCommand(channel, database, name, engineCommand));
        } catch (MongoServerError e) {
            return error(e.getCode(), e.getCodeName(), e.getMessageWithoutErrorCode());
        } catch (MongoServerException e) {
            return error(8, "UnknownError", e.getMessageWithoutErrorCode());
        } finally {
            lock.unlock();
        }
    }

    /**
     * A server error reply.
     *
     * @param code     the error code
     * @param codeName the code name, or null for {@code UnknownError}
     * @param message  the message, or null for the code name
     * @return {@code {ok: 0, errmsg, code, codeName}}
     */
    public static BsonDocument error(int code, String codeName, String message) {
        return new BsonDocument("ok", new BsonDouble(0))
            .append("errmsg", new BsonString(message == null ? codeName : message))
            .append("code", new BsonInt32(code))
            .append("codeName", new BsonString(codeName == null ? "UnknownError" : codeName));
    }

    private static Document toEngine(BsonDocument document) {
        ByteBuf buffer = Unpooled.wrappedBuffer(Bson.encode(document));
        try {
            return BsonDecoder.decodeBson(buffer);
        } finally {
            buffer.release();
        }
    }

    private static BsonDocument fromEngine(Document document) {
        ByteBuf buffer = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(document, buffer);
            byte[] bytes = new byte[buffer.readableBytes()];
            buffer.readBytes(bytes);
            return Bson.decode(bytes);
        } finally {
            buffer.release();
        }
    }

    @Override
    public void close() {
        backend.close();
        channel.close();
    }
}
