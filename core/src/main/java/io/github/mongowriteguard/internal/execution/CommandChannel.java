package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoDatabase;
import com.mongodb.session.ClientSession;
import io.github.mongowriteguard.internal.ServerTracker;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * The wire under {@link CopySender}: one command, on one session, to the primary, and what came back. The only part
 * of a send that depends on the driver's transport: the sender decides everything else (copies, retries, the gate,
 * what an answer proves) the same way for every channel. {@link #of} is the synchronous driver's; a channel must not
 * classify, retry or wait between sends, and must give the driver's exception as the driver raised it.
 */
@FunctionalInterface
interface CommandChannel {

    /**
     * Sends {@code command} once.
     *
     * @param session the session the command carries (the transport's own session type)
     * @param command the command, with its {@code lsid}, {@code txnNumber} and deadline already decided
     * @return the server's reply (ok: 1) or the exception the driver raised, with the server that answered if known
     */
    Answer send(ClientSession session, BsonDocument command);

    /**
     * Sends {@code command} once without waiting for the answer on the calling thread: the returned future completes
     * on the thread the driver answers on (the reactive driver's I/O thread), where the send loop goes on only while
     * it makes no blocking call ({@link CopySender}). A channel whose driver answers only on the calling thread (the
     * synchronous driver's) sends there, as {@link #send}, and returns a completed future.
     */
    default CompletableFuture<Answer> sendAsync(ClientSession session, BsonDocument command) {
        return Continuations.completed(() -> send(session, command));
    }

    /**
     * What one send came to: a reply, or the driver's exception.
     *
     * @param reply  the reply, or null when the driver raised {@code error}
     * @param error  the driver's exception, or null with a reply
     * @param server the server the command went to, when the transport knows it
     */
    record Answer(
            @Nullable RawBsonDocument reply,
            @Nullable MongoException error,
            @Nullable ServerAddress server) {
        public Answer {
            if ((reply == null) == (error == null)) {
                throw new IllegalArgumentException("an answer is a reply or an error, not both nor neither");
            }
        }

        static Answer reply(RawBsonDocument reply, @Nullable ServerAddress server) {
            return new Answer(Objects.requireNonNull(reply, "reply"), null, server);
        }

        static Answer error(MongoException error, @Nullable ServerAddress server) {
            return new Answer(null, Objects.requireNonNull(error, "error"), server);
        }
    }

    /**
     * The synchronous driver's channel: {@code runCommand} on {@code database} (the collection's database with the
     * collection's codecs), the server read from {@code servers} (the connection the calling thread checked out).
     */
    static CommandChannel of(MongoDatabase database, ServerTracker servers) {
        return (session, command) -> {
            try {
                RawBsonDocument reply = database.runCommand(
                        (com.mongodb.client.ClientSession) session,
                        command,
                        ReadPreference.primary(),
                        RawBsonDocument.class);
                return Answer.reply(reply, servers.serverOfLastSendOnThisThread());
            } catch (MongoException e) {
                return Answer.error(e, servers.serverOfLastSendOnThisThread());
            }
        };
    }
}
