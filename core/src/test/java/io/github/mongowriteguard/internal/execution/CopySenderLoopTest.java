package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ServerAddress;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.copies.GateVerdict;
import io.github.mongowriteguard.internal.CallObserver;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.GuardTime;
import io.github.mongowriteguard.internal.ServerTracker;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The send loop of {@link CopySender}, as a table: the answers a channel gives in order, whether the command is a
 * retryable write ({@code txnNumber}) or allowed a new copy, and the overlap gate's verdicts, against what was sent,
 * waited and recorded. The channel and the clock are the sender's seams ({@link CommandChannel}, {@link GuardTime}):
 * no server is asked and no real time passes; the session is a real driver session (its id names the copy).
 */
class CopySenderLoopTest {
    private static final ServerAddress SERVER = new ServerAddress("shard0", 27017);
    private static final long MAX_TIME_MS = 1_000;

    private static EmulatedReplicaSet cluster;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        cluster = EmulatedCluster.replicaSet().start();
        client = MongoClients.create(new ConnectionString(cluster.connectionString()));
    }

    @AfterAll
    static void stop() {
        client.close();
        cluster.close();
    }

    /** An answer the scripted channel gives. */
    private enum A {
        OK(() -> CommandChannel.Answer.reply(RawBsonDocument.parse("{ok: 1, n: 1}"), SERVER)),
        /** A reply whose write error is transient (a retryable write's resend is answered from the record). */
        OK_WITH_TRANSIENT_WRITE_ERROR(() -> CommandChannel.Answer.reply(
                RawBsonDocument.parse(
                        "{ok: 1, n: 0, writeErrors: [{index: 0, code: 91, errmsg: 'ShutdownInProgress'}]}"),
                SERVER)),
        SOCKET_TIMEOUT(() -> CommandChannel.Answer.error(
                new MongoSocketReadTimeoutException("read timed out", SERVER, new SocketTimeoutException()), null)),
        NO_SERVER(() -> CommandChannel.Answer.error(new MongoTimeoutException("no server selected"), null)),
        STEPPED_DOWN(() -> CommandChannel.Answer.error(commandError(189, "PrimarySteppedDown"), SERVER)),
        BAD_VALUE(() -> CommandChannel.Answer.error(commandError(2, "BadValue"), SERVER)),
        MAX_TIME_MS_EXPIRED(() -> CommandChannel.Answer.error(
                new MongoExecutionTimeoutException(50, "operation exceeded time limit"), SERVER)),
        CLIENT_FAILURE(() -> CommandChannel.Answer.error(new MongoException("interrupted"), null));

        final Supplier<CommandChannel.Answer> answer;

        A(Supplier<CommandChannel.Answer> answer) {
            this.answer = answer;
        }

        private static MongoException commandError(int code, String name) {
            return new MongoCommandException(
                    new BsonDocument("ok", new BsonInt32(0))
                            .append("code", new BsonInt32(code))
                            .append("codeName", new org.bson.BsonString(name))
                            .append("errmsg", new org.bson.BsonString(name)),
                    SERVER);
        }
    }

    /** How the command may be sent again. */
    private enum Kind {
        /** a retryable write: the same copy again, never through the gate */
        RETRYABLE,
        /** without txnNumber, the caller's opt-in: a new copy, behind the gate */
        NEW_COPY_ALLOWED,
        /** without txnNumber and no opt-in: sent once */
        ONCE
    }

    /**
     * One row: how the command may be sent again, the channel's answers and the gate's verdicts in order, and what
     * the loop came to ({@link #observed}).
     */
    record Row(String name, Kind kind, List<A> answers, List<GateVerdict> verdicts, String expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Row> rows() {
        return Stream.of(
                new Row(
                        "retryable, answered at once",
                        Kind.RETRYABLE,
                        List.of(A.OK),
                        List.of(),
                        "sends 1, copies 1, backoffs 0, gate 0, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "retryable, lost reply then answered: same copy, one backoff, no gate",
                        Kind.RETRYABLE,
                        List.of(A.SOCKET_TIMEOUT, A.OK),
                        List.of(),
                        "sends 2, copies 1, backoffs 1, gate 0, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "retryable, every send lost: attempts spent, unanswered",
                        Kind.RETRYABLE,
                        List.of(A.SOCKET_TIMEOUT, A.SOCKET_TIMEOUT, A.SOCKET_TIMEOUT),
                        List.of(),
                        "sends 3, copies 1, backoffs 2, gate 0, GAVE_UP, unanswered, reached, earlier 2, running 0"),
                new Row(
                        "retryable, transient server error then answered",
                        Kind.RETRYABLE,
                        List.of(A.STEPPED_DOWN, A.OK),
                        List.of(),
                        "sends 2, copies 1, backoffs 1, gate 0, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "retryable, transient write error in a reply: resent",
                        Kind.RETRYABLE,
                        List.of(A.OK_WITH_TRANSIENT_WRITE_ERROR, A.OK),
                        List.of(),
                        "sends 2, copies 1, backoffs 1, gate 0, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "retryable, non-transient server error: not resent",
                        Kind.RETRYABLE,
                        List.of(A.BAD_VALUE),
                        List.of(),
                        "sends 1, copies 1, backoffs 0, gate 0, SERVER_ERROR, answered, reached, earlier 0, running 0"),
                new Row(
                        "retryable, no server then answered",
                        Kind.RETRYABLE,
                        List.of(A.NO_SERVER, A.OK),
                        List.of(),
                        "sends 2, copies 1, backoffs 1, gate 0, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "retryable, client-side failure after sending, then answered",
                        Kind.RETRYABLE,
                        List.of(A.CLIENT_FAILURE, A.OK),
                        List.of(),
                        "sends 2, copies 1, backoffs 1, gate 0, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "once, lost reply: not resent, unanswered",
                        Kind.ONCE,
                        List.of(A.SOCKET_TIMEOUT),
                        List.of(),
                        "sends 1, copies 1, backoffs 0, gate 0, GAVE_UP, unanswered, reached, earlier 0, running 0"),
                new Row(
                        "once, no server: nothing reached",
                        Kind.ONCE,
                        List.of(A.NO_SERVER),
                        List.of(),
                        "sends 1, copies 1, backoffs 0, gate 0, NO_SERVER, answered, not reached, earlier 0, running 0"),
                new Row(
                        "once, deadline: not resent",
                        Kind.ONCE,
                        List.of(A.MAX_TIME_MS_EXPIRED),
                        List.of(),
                        "sends 1, copies 1, backoffs 0, gate 0, SERVER_ERROR, answered, reached, earlier 0, running 0"),
                new Row(
                        "new copy allowed, lost reply, gate proceeds: a second copy answers",
                        Kind.NEW_COPY_ALLOWED,
                        List.of(A.SOCKET_TIMEOUT, A.OK),
                        List.of(GateVerdict.PROCEED),
                        "sends 2, copies 2, backoffs 1, gate 1, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "new copy allowed, lost reply, gate killed the copy: a second copy answers",
                        Kind.NEW_COPY_ALLOWED,
                        List.of(A.SOCKET_TIMEOUT, A.OK),
                        List.of(GateVerdict.KILLED),
                        "sends 2, copies 2, backoffs 1, gate 1, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "new copy allowed, lost reply, gate refuses: no second copy, the first named running",
                        Kind.NEW_COPY_ALLOWED,
                        List.of(A.SOCKET_TIMEOUT),
                        List.of(GateVerdict.REFUSED),
                        "sends 1, copies 1, backoffs 1, gate 1, REFUSED, unanswered, reached, earlier 0, running 1"),
                new Row(
                        "new copy allowed, lost reply, gate blind: no second copy",
                        Kind.NEW_COPY_ALLOWED,
                        List.of(A.SOCKET_TIMEOUT),
                        List.of(GateVerdict.BLIND),
                        "sends 1, copies 1, backoffs 1, gate 1, BLIND, unanswered, reached, earlier 0, running 0"),
                new Row(
                        "new copy allowed, no server, gate blind: nothing unanswered, so a new copy",
                        Kind.NEW_COPY_ALLOWED,
                        List.of(A.NO_SERVER, A.OK),
                        List.of(GateVerdict.BLIND),
                        "sends 2, copies 2, backoffs 1, gate 1, REPLY, answered, reached, earlier 0, running 0"),
                new Row(
                        "new copy allowed, non-transient error: no gate",
                        Kind.NEW_COPY_ALLOWED,
                        List.of(A.BAD_VALUE),
                        List.of(),
                        "sends 1, copies 1, backoffs 0, gate 0, SERVER_ERROR, answered, reached, earlier 0, running 0"));
    }

    /** How the sender's waits are driven: the one loop, two drivings. */
    enum Driving {
        /** the synchronous driver's: every wait on the calling thread ({@code send}) */
        ON_THE_CALLING_THREAD,
        /**
         * the reactive driver's ({@code sendAsync}): each answer completes on a "driver" thread, the backoff is a
         * timer, and the loop continues on the resume executor, never on the driver's thread
         */
        IN_COMPLETIONS
    }

    static Stream<org.junit.jupiter.params.provider.Arguments> rowsAndDrivings() {
        return rows().flatMap(row -> Stream.of(Driving.values())
                .map(driving -> org.junit.jupiter.params.provider.Arguments.of(row, driving)));
    }

    private static java.util.concurrent.ExecutorService driverThread;
    private static java.util.concurrent.ExecutorService resumeThread;

    @BeforeAll
    static void threads() {
        driverThread = java.util.concurrent.Executors.newSingleThreadExecutor(task -> new Thread(task, "driver-io"));
        resumeThread = java.util.concurrent.Executors.newSingleThreadExecutor(task -> new Thread(task, "guard"));
    }

    @AfterAll
    static void stopThreads() {
        driverThread.shutdownNow();
        resumeThread.shutdownNow();
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("rowsAndDrivings")
    void sendLoop(Row row, Driving driving) throws Exception {
        ScriptedTime time = new ScriptedTime(true);
        Deque<A> answers = new ArrayDeque<>(row.answers());
        Deque<GateVerdict> verdicts = new ArrayDeque<>(row.verdicts());
        List<BsonDocument> sent = new ArrayList<>();
        int[] gateCalls = {0};
        java.util.Set<String> gateThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
        CommandChannel scripted = (session, command) -> {
            sent.add(command);
            assertThat(answers)
                    .as("the loop sent more than the table's answers")
                    .isNotEmpty();
            return answers.poll().answer.get();
        };
        boolean inCompletions = driving == Driving.IN_COMPLETIONS;
        CommandChannel channel = !inCompletions
                ? scripted
                : new CommandChannel() {
                    @Override
                    public Answer send(com.mongodb.session.ClientSession session, BsonDocument command) {
                        throw new AssertionError("a loop driven in completions waited for an answer");
                    }

                    @Override
                    public java.util.concurrent.CompletableFuture<Answer> sendAsync(
                            com.mongodb.session.ClientSession session, BsonDocument command) {
                        // the answer completes on the driver's thread, as the reactive driver's does
                        return java.util.concurrent.CompletableFuture.supplyAsync(
                                () -> scripted.send(session, command), driverThread);
                    }
                };
        if (inCompletions) {
            time.noSleeping = true;
        }
        CopySender sender = sender(
                time,
                channel,
                (copy, lastSendNanos, maxTimeMs) -> {
                    gateThreads.add(Thread.currentThread().getName());
                    gateCalls[0]++;
                    assertThat(maxTimeMs).isEqualTo(MAX_TIME_MS);
                    return verdicts.poll();
                },
                inCompletions ? resumeThread : null);
        RecordingTally tally = new RecordingTally();
        BsonDocument body = new BsonDocument("insert", new org.bson.BsonString("c"));
        CopySender.Sent result;
        try (ClientSession session = client.startSession()) {
            Sessions sessions = Sessions.callers(session);
            Long txnNumber = row.kind() == Kind.RETRYABLE ? 1L : null;
            boolean newCopies = row.kind() == Kind.NEW_COPY_ALLOWED;
            result = inCompletions
                    ? sender.sendAsync(sessions, body, txnNumber, newCopies, "mwg:test", tally)
                            .get(10, java.util.concurrent.TimeUnit.SECONDS)
                    : sender.send(sessions, body, txnNumber, newCopies, "mwg:test", tally);
        }

        assertThat(gateThreads)
                .as("the overlap gate never waits on the driver's thread")
                .noneMatch(thread -> thread.startsWith("driver-io"));

        assertThat(answers).as("answers left unsent").isEmpty();
        assertThat(tally.sends).as("sends tallied").isEqualTo(sent.size());
        assertThat(tally.copies).as("a copy recorded per copy started").hasSize(tally.commands);
        assertThat(time.sleeps).as("each backoff the policy's").allMatch(nanos -> nanos >= 100_000_000L);
        assertThat(result.resent()).as("resent").isEqualTo(sent.size() > 1);
        assertThat(observed(sent.size(), tally, time, gateCalls[0], result)).isEqualTo(row.expected());
    }

    /** What the loop came to, in the table's words. */
    private static String observed(
            int sends, RecordingTally tally, ScriptedTime time, int gateCalls, CopySender.Sent sent) {
        String ending = sent.result().toString();
        return "sends " + sends + ", copies " + tally.commands + ", backoffs " + time.sleeps.size() + ", gate "
                + gateCalls + ", " + (ending.contains(" ") ? ending.substring(0, ending.indexOf(' ')) : ending) + ", "
                + (sent.unanswered() ? "unanswered" : "answered") + ", "
                + (sent.reachedServer() ? "reached" : "not reached")
                + ", earlier " + sent.earlier().size() + ", running " + tally.stillRunning.size();
    }

    @org.junit.jupiter.api.Test
    void interruptedBackoff_sendsNoMore() {
        ScriptedTime time = new ScriptedTime(false);
        int[] sends = {0};
        CopySender sender = sender(
                time,
                (session, command) -> {
                    sends[0]++;
                    return A.SOCKET_TIMEOUT.answer.get();
                },
                (copy, lastSendNanos, maxTimeMs) -> GateVerdict.PROCEED);
        CopySender.Sent result;
        try (ClientSession session = client.startSession()) {
            result = sender.send(
                    Sessions.callers(session),
                    new BsonDocument("insert", new org.bson.BsonString("c")),
                    1L,
                    false,
                    null,
                    new RecordingTally());
        }
        assertThat(sends[0]).isEqualTo(1);
        assertThat(time.sleeps).hasSize(1);
        assertThat(result.unanswered()).isTrue();
    }

    @org.junit.jupiter.api.Test
    void gateDeadline_isReadOnTheRuntimesClock() {
        ScriptedTime time = new ScriptedTime(true);
        time.now = 5_000_000_000L;
        long[] seen = {0};
        CopySender sender = sender(
                time,
                (session, command) -> {
                    time.now += 7;
                    return A.SOCKET_TIMEOUT.answer.get();
                },
                (copy, lastSendNanos, maxTimeMs) -> {
                    seen[0] = lastSendNanos;
                    return GateVerdict.REFUSED;
                });
        try (ClientSession session = client.startSession()) {
            sender.send(
                    Sessions.callers(session),
                    new BsonDocument("delete", new org.bson.BsonString("c")),
                    null,
                    true,
                    null,
                    new RecordingTally());
        }
        assertThat(seen[0])
                .as("the gate gets the send's time on the runtime's clock")
                .isEqualTo(5_000_000_000L);
    }

    private static CopySender sender(GuardTime time, CommandChannel channel, CopySender.Gate gate) {
        return sender(time, channel, gate, null);
    }

    private static CopySender sender(
            GuardTime time,
            CommandChannel channel,
            CopySender.Gate gate,
            java.util.concurrent.@org.jspecify.annotations.Nullable Executor resumeThreads) {
        Resume resume = resumeThreads == null
                ? null
                : Resume.of(
                        resumeThreads, () -> Thread.currentThread().getName().equals("guard"));
        GuardRuntime.Settings settings = new GuardRuntime.Settings(
                RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(100))
                        .maxBackoff(Duration.ofSeconds(1))
                        .jitter(0)
                        .build(),
                WriteGuardSettings.DEFAULT_PARALLEL_SHARD_COMMANDS,
                false,
                false);
        GuardRuntime runtime = new GuardRuntime(
                settings, new ServerTracker(), new LiveCopyLedger(), List.of(), CallObserver.NONE, time);
        return new CopySender(runtime, channel, gate, "db.c", MAX_TIME_MS, new ClientBinding(null, 0, null), resume);
    }

    /**
     * A clock that moves only when slept on (or when a timer is set: it fires at once, on the executor given), and
     * remembers each sleep.
     */
    private static final class ScriptedTime implements GuardTime {
        final List<Long> sleeps = java.util.Collections.synchronizedList(new ArrayList<>());
        /** A loop driven in completions must set timers, never sleep. */
        boolean noSleeping;

        final boolean wakes;
        volatile long now = 1_000;

        ScriptedTime(boolean wakes) {
            this.wakes = wakes;
        }

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public java.util.concurrent.CompletableFuture<Boolean> delayNanos(
                long nanos, java.util.concurrent.Executor then) {
            sleeps.add(nanos);
            now += nanos;
            return java.util.concurrent.CompletableFuture.supplyAsync(() -> true, then);
        }

        @Override
        public boolean sleepNanos(long nanos) {
            assertThat(noSleeping)
                    .as("a loop driven in completions slept on a thread")
                    .isFalse();
            sleeps.add(nanos);
            now += nanos;
            return wakes;
        }
    }

    private static final class RecordingTally implements CopySender.Tally {
        int commands;
        int sends;
        final List<CopyRecord> copies = new ArrayList<>();
        final List<CopyRecord> stillRunning = new ArrayList<>();

        @Override
        public void command() {
            commands++;
        }

        @Override
        public void send() {
            sends++;
        }

        @Override
        public void server(ServerAddress address) {}

        @Override
        public void copy(CopyRecord copy) {
            copies.add(copy);
        }

        @Override
        public void stillRunning(CopyRecord copy) {
            stillRunning.add(copy);
        }
    }
}
