package io.github.mongowriteguard.faults;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.util.concurrent.TimeUnit;

/**
 * How a client writes: through the guard (synchronous or reactive), or with the raw driver and an application retry
 * loop.
 */
public interface Writer extends AutoCloseable {

    /** The writers the suite compares. */
    enum Kind {
        RAW("raw driver + app retries"),
        GUARDED("guarded"),
        REACTIVE("reactive guard");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }

        Writer create(String connectionString, FaultConfig config) {
            return switch (this) {
                case RAW -> new RawWriter(connectionString, config);
                case GUARDED -> new GuardedWriter(connectionString, config);
                case REACTIVE -> new ReactiveGuardedWriter(connectionString, config);
            };
        }

        /**
         * The writes a received command carries, as one key: the guard names each of its commands with its own comment
         * ({@code mwg:<call>:<round>.<command>}, the same on every send and on every copy of that command, through either
         * transport); the raw
         * writer names an operation ({@code raw:<operation>}) and the driver sends one command per write type, so the
         * key is the comment and the command name (an ordered bulk alternating types sends two commands of one type,
         * which this key takes for one: it can only over-count the raw driver's copies). Null for other commands.
         */
        String copyGroup(ReceivedCommand command) {
            if (command.comment() == null || !command.comment().isString()) {
                return null;
            }
            String comment = command.comment().asString().getValue();
            if (this == RAW) {
                return comment.startsWith("raw:") ? comment + "/" + command.commandName() : null;
            }
            return comment.startsWith("mwg:") ? comment : null;
        }
    }

    /** Runs one operation and records a claim for each of its writes. */
    void run(Operation operation, int order, Ledger ledger);

    @Override
    void close();

    /**
     * The client settings both writers share: the run's socket read timeout, 500 ms to connect, frequent heartbeats
     * (the emulator answers {@code hello} by polling), {@code w: "majority"}.
     */
    static MongoClientSettings.Builder settings(String connectionString, FaultConfig config) {
        return MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS))
                .applyToServerSettings(s -> s.heartbeatFrequency(200, TimeUnit.MILLISECONDS)
                        .minHeartbeatFrequency(50, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(s -> s.connectTimeout(500, TimeUnit.MILLISECONDS)
                        .readTimeout((int) config.socketTimeout().toMillis(), TimeUnit.MILLISECONDS))
                .writeConcern(WriteConcern.MAJORITY);
    }
}
