package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;

/**
 * A queue consumer under faults, the raw driver with an application retry against the guard with the README's
 * recipe (settle first): 2,000 events on hot keys, {@code $inc}s and full replacements, written in polls of 100 as one
 * ordered bulk each, on a replicating 3-member set with {@code w: majority}. Each fault type strikes three polls. The
 * final documents are then checked against the events: each document keeps the event that last replaced it
 * ({@code base}) and the {@code $inc} events applied since ({@code incs}, pushed by the same update), so an event
 * missing from there was lost, one listed twice was applied twice, and one that is there though the consumer
 * dead-lettered it was applied and dead-lettered.
 */
final class Settling {
    static final String DATABASE = "lab";
    static final String COLLECTION = "stock";
    static final String NAMESPACE = DATABASE + "." + COLLECTION;

    /** The fault types; each is injected before three of the run's polls and healed as {@link #inject} says. */
    enum Fault {
        LOST_REPLIES("lost-replies"),
        SOCKET_TIMEOUT("socket-timeout"),
        STALL("stall"),
        WRITE_CONCERN_ERROR("write-concern-error"),
        STEPDOWN("stepdown"),
        FAILOVER("failover");

        final String label;

        Fault(String label) {
            this.label = label;
        }

        static Fault of(String label) {
            for (Fault fault : values()) {
                if (fault.label.equals(label)) {
                    return fault;
                }
            }
            throw new IllegalArgumentException(label + " is not a fault type; one of: lost-replies, socket-timeout,"
                    + " stall, write-concern-error, stepdown, failover");
        }
    }

    /** One event: an {@code $inc} of {@code qty} by {@code delta}, or a replacement setting it to {@code delta}. */
    record Event(int id, int key, boolean replacement, int delta) {
        WriteModel<Document> model() {
            if (replacement) {
                return new ReplaceOneModel<>(
                        Filters.eq("_id", key),
                        new Document("_id", key)
                                .append("qty", delta)
                                .append("base", id)
                                .append("incs", List.of()),
                        new ReplaceOptions().upsert(true));
            }
            return new UpdateOneModel<>(
                    Filters.eq("_id", key),
                    Updates.combine(Updates.inc("qty", delta), Updates.push("incs", id)),
                    new UpdateOptions().upsert(true));
        }
    }

    /** One client's run under one fault type. */
    record Row(
            String client,
            String fault,
            int events,
            int lost,
            int appliedTwice,
            int deadLettered,
            int appliedDeadLettered,
            int unknownLeft,
            int applicationResends,
            int settles,
            double msPerPoll,
            double maxMsPerPoll) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("client", client);
            json.put("fault", fault);
            json.put("events", events);
            json.put("lost", lost);
            json.put("appliedTwice", appliedTwice);
            json.put("deadLettered", deadLettered);
            json.put("appliedDeadLettered", appliedDeadLettered);
            json.put("unknownLeft", unknownLeft);
            json.put("applicationResends", applicationResends);
            json.put("settles", settles);
            json.put("msPerPoll", Formula.round1(msPerPoll));
            json.put("maxMsPerPoll", Formula.round1(maxMsPerPoll));
            return json;
        }
    }

    /** The run's parameters. */
    record Settings(int events, int pollSize, int keys, int socketTimeoutMs, int appAttempts, long seed) {}

    private Settling() {}

    static List<Row> run(Settings settings, List<Fault> faults, PrintStream log) throws InterruptedException {
        List<Event> events = events(settings);
        List<Row> rows = new ArrayList<>();
        for (Fault fault : faults) {
            for (String client : List.of("raw", "guarded")) {
                log.printf("settle: %s client, %s%n", client, fault.label);
                rows.add(runOne(settings, events, fault, client));
            }
        }
        return rows;
    }

    /** Hot keys: half the events on a fifth of the keys; three in ten events are replacements. */
    static List<Event> events(Settings settings) {
        Random random = new Random(settings.seed());
        int hot = Math.max(1, settings.keys() / 5);
        List<Event> events = new ArrayList<>(settings.events());
        for (int id = 0; id < settings.events(); id++) {
            int key = random.nextBoolean() ? random.nextInt(hot) : random.nextInt(settings.keys());
            boolean replacement = random.nextInt(10) < 3;
            events.add(
                    new Event(id, key, replacement, replacement ? 100 + random.nextInt(900) : 1 + random.nextInt(9)));
        }
        return events;
    }

    private static Row runOne(Settings settings, List<Event> events, Fault fault, String client)
            throws InterruptedException {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(Duration.ofMillis(500))
                .start()) {
            cluster.awaitPrimary(Duration.ofSeconds(30));
            MongoClientSettings.Builder builder = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(cluster.connectionString()))
                    .applicationName("settle-lab-" + client)
                    .writeConcern(WriteConcern.MAJORITY)
                    .applyToSocketSettings(s -> s.readTimeout(settings.socketTimeoutMs(), TimeUnit.MILLISECONDS))
                    .applyToClusterSettings(s -> s.serverSelectionTimeout(10, TimeUnit.SECONDS));
            WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                    .retryPolicy(RetryPolicy.builder()
                            .maxAttempts(settings.appAttempts())
                            .initialBackoff(Duration.ofMillis(50))
                            .build())
                    .build());
            boolean guarded = client.equals("guarded");
            if (guarded) {
                guard.configure(builder);
            }
            try (MongoClient mongo = MongoClients.create(builder.build())) {
                MongoCollection<Document> stock = mongo.getDatabase(DATABASE).getCollection(COLLECTION);
                stock.withWriteConcern(WriteConcern.MAJORITY).insertOne(new Document("_id", "warm-up"));
                Consumer consumer = guarded
                        ? new GuardedConsumer(guard.guardCollection(mongo, stock))
                        : new RawConsumer(stock, settings.appAttempts());
                Set<Integer> strike = strikes(settings);
                Tally tally = new Tally();
                Check check = new Check(tally.deadLettered);
                long total = 0;
                long max = 0;
                int polls = 0;
                for (int from = 0; from < events.size(); from += settings.pollSize()) {
                    List<Event> poll = events.subList(from, Math.min(events.size(), from + settings.pollSize()));
                    Runnable heal = strike.contains(polls) ? inject(fault, cluster, settings) : () -> {};
                    long start = System.nanoTime();
                    try {
                        consumer.write(poll, tally);
                    } finally {
                        heal.run();
                    }
                    long took = System.nanoTime() - start;
                    total += took;
                    max = Math.max(max, took);
                    polls++;
                    // Checked after every poll, once no copy runs on the server any more: a later replacement of a
                    // document would hide an $inc lost or applied twice in this poll from a check at the end alone.
                    check.after(events.subList(0, Math.min(events.size(), from + settings.pollSize())), stock, cluster);
                }
                cluster.awaitPrimary(Duration.ofSeconds(30));
                cluster.awaitReplication(Duration.ofSeconds(30));
                return new Row(
                        client,
                        fault.label,
                        events.size(),
                        check.lost.size(),
                        check.twice.size(),
                        tally.deadLettered.size(),
                        check.appliedDeadLettered.size(),
                        tally.unknownLeft.size(),
                        tally.resends,
                        tally.settles,
                        total / 1e6 / polls,
                        max / 1e6);
            }
        }
    }

    /** The polls a fault strikes: the 3rd, the middle one and the 3rd from the end. */
    private static Set<Integer> strikes(Settings settings) {
        int polls = (settings.events() + settings.pollSize() - 1) / settings.pollSize();
        return new HashSet<>(List.of(Math.min(2, polls - 1), polls / 2, Math.max(0, polls - 3)));
    }

    /** Injects {@code fault} on the current primary; the returned action heals it once the poll is written. */
    static Runnable inject(Fault fault, EmulatedReplicaSet cluster, Settings settings) {
        EmulatedNode primary = cluster.awaitPrimary(Duration.ofSeconds(30));
        int socketMs = settings.socketTimeoutMs();
        switch (fault) {
            case LOST_REPLIES:
                // The command runs and its reply is lost: the connection closes after the write.
                primary.loseReplies(2, "update");
                return primary::stopLosingReplies;
            case SOCKET_TIMEOUT:
                // The command is held past the client's socket timeout before it runs (failCommand's blockConnection).
                failCommand(
                        primary,
                        2,
                        new BsonDocument("blockConnection", BsonBoolean.TRUE)
                                .append("blockTimeMS", new BsonInt32(socketMs + 200)));
                return () -> primary.failCommand().off();
            case STALL: {
                // An uninterruptible stall three socket timeouts long: the first copy runs on after the client gave up.
                // Every write on the collection is held (and then runs, whatever the deadline) until the stall ends,
                // three socket timeouts after it began: the first copies run on after the client gave up.
                StallHandle handle = primary.stall(Stall.uninterruptible(NAMESPACE, Duration.ofDays(1)));
                Thread release = new Thread(
                        () -> {
                            sleep(3L * socketMs);
                            handle.release();
                        },
                        "settle-lab-stall");
                release.setDaemon(true);
                release.start();
                return () -> join(release);
            }
            case WRITE_CONCERN_ERROR:
                failCommand(
                        primary,
                        2,
                        new BsonDocument(
                                "writeConcernError",
                                new BsonDocument("code", new BsonInt32(64))
                                        .append("codeName", new BsonString("WriteConcernFailed"))
                                        .append("errmsg", new BsonString("waiting for replication timed out"))
                                        .append("errInfo", new BsonDocument("wtimeout", BsonBoolean.TRUE))));
                return () -> primary.failCommand().off();
            case STEPDOWN:
                // The primary answers PrimarySteppedDown (189, a retryable write error) more times than the clients
                // retry, as a primary that steps down again and again does; then it writes again.
                failCommand(
                        primary,
                        settings.appAttempts() + 2,
                        new BsonDocument("errorCode", new BsonInt32(189))
                                .append("errorLabels", new BsonArray(List.of(new BsonString("RetryableWriteError")))));
                return () -> primary.failCommand().off();
            case FAILOVER: {
                // The primary stops as the poll starts; another member is elected; the old one comes back as a
                // secondary once the poll is written.
                cluster.stop(primary);
                return () -> {
                    cluster.awaitPrimary(Duration.ofSeconds(30));
                    cluster.start(primary);
                };
            }
            default:
                throw new IllegalArgumentException(fault.label);
        }
    }

    private static void failCommand(EmulatedNode node, int times, BsonDocument data) {
        node.failCommand()
                .configure(new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                        .append("mode", new BsonDocument("times", new BsonInt32(times)))
                        .append("data", data.append("failCommands", new BsonArray(List.of(new BsonString("update"))))));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void join(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What a consumer did with the events, beyond what it wrote. */
    static final class Tally {
        final Set<Integer> deadLettered = new HashSet<>();
        final Set<Integer> unknownLeft = new HashSet<>();
        int resends;
        int settles;
    }

    /** Writes one poll; returns when every event of it is acknowledged or dead-lettered (or held to settle later). */
    interface Consumer {
        void write(List<Event> poll, Tally tally);
    }

    /**
     * The consumer the users had: one ordered bulk per poll; on an exception the whole poll again (Spring
     * Kafka's {@code DefaultErrorHandler} redelivers the batch), up to {@code attempts} times; then the poll goes to the
     * dead-letter queue. Events of a dead-lettered poll whose fate the exception did not tell are left unknown.
     */
    static final class RawConsumer implements Consumer {
        private final MongoCollection<Document> stock;
        private final int attempts;

        RawConsumer(MongoCollection<Document> stock, int attempts) {
            this.stock = stock;
            this.attempts = attempts;
        }

        @Override
        public void write(List<Event> poll, Tally tally) {
            List<WriteModel<Document>> models = new ArrayList<>();
            poll.forEach(e -> models.add(e.model()));
            for (int attempt = 1; attempt <= attempts; attempt++) {
                try {
                    stock.bulkWrite(models, new BulkWriteOptions().ordered(true));
                    return;
                } catch (MongoException e) {
                    if (attempt == attempts) {
                        poll.forEach(ev -> tally.deadLettered.add(ev.id()));
                        poll.forEach(ev -> tally.unknownLeft.add(ev.id()));
                        return;
                    }
                    tally.resends++;
                    sleep(100);
                }
            }
        }
    }

    /**
     * The README's recipe, literally: execute; settle the UNKNOWN writes; then per write: APPLIED acknowledge, SKIPPED
     * send again now (or, when the UNKNOWN write it names is not settled yet, after that one), FAILED and retry-safe
     * send again, FAILED otherwise dead-letter, UNKNOWN and settleable settle again later, UNKNOWN otherwise
     * dead-letter. Like a consumer that keeps each key's order, it finishes a poll before it takes the next one, and
     * sends nothing on a key whose earlier write is still unresolved: "later" is after a short backoff, within the poll,
     * for up to a minute, after which what is left is dead-lettered.
     */
    static final class GuardedConsumer implements Consumer {
        private static final long BUDGET_NANOS = TimeUnit.SECONDS.toNanos(60);
        private final GuardedCollection<Document> stock;

        GuardedConsumer(GuardedCollection<Document> stock) {
            this.stock = stock;
        }

        @Override
        public void write(List<Event> poll, Tally tally) {
            long deadline = System.nanoTime() + BUDGET_NANOS;
            List<Event> toSend = new ArrayList<>(poll);
            List<Held> held = new ArrayList<>();
            while (!toSend.isEmpty() || !held.isEmpty()) {
                List<Event> now = sendable(toSend, held);
                if (!now.isEmpty()) {
                    toSend.removeAll(now);
                    List<WriteModel<Document>> models = new ArrayList<>();
                    now.forEach(e -> models.add(e.model()));
                    held.add(new Held(now, stock.execute(models, new BulkWriteOptions().ordered(true))));
                }
                boolean waiting = false;
                List<Event> resend = new ArrayList<>();
                for (Held h : held) {
                    if (h.outcome.hasUnknown()) {
                        h.outcome = stock.settle(h.outcome);
                        tally.settles++;
                    }
                    for (var pending = h.pending.iterator(); pending.hasNext(); ) {
                        int index = pending.next();
                        IndexOutcome o = h.outcome.outcome(index);
                        Event event = h.events.get(index);
                        switch (o.status()) {
                            case APPLIED, SUPERSEDED -> pending.remove();
                            case SKIPPED -> {
                                if (o.relatedIndex() >= 0
                                        && h.outcome.outcome(o.relatedIndex()).status() == WriteStatus.UNKNOWN) {
                                    waiting = true;
                                } else {
                                    resend.add(event);
                                    pending.remove();
                                }
                            }
                            case FAILED -> {
                                if (o.retrySafe()) {
                                    resend.add(event);
                                } else {
                                    tally.deadLettered.add(event.id());
                                }
                                pending.remove();
                            }
                            case UNKNOWN -> {
                                if (o.settleable()) {
                                    waiting = true;
                                } else {
                                    tally.deadLettered.add(event.id());
                                    tally.unknownLeft.add(event.id());
                                    pending.remove();
                                }
                            }
                        }
                    }
                }
                held.removeIf(h -> h.pending.isEmpty());
                if (!resend.isEmpty()) {
                    tally.resends++;
                    toSend.addAll(resend);
                    toSend.sort((a, b) -> Integer.compare(a.id(), b.id()));
                }
                if (System.nanoTime() > deadline) {
                    for (Held h : held) {
                        for (int index : h.pending) {
                            tally.deadLettered.add(h.events.get(index).id());
                            if (h.outcome.outcome(index).status() == WriteStatus.UNKNOWN) {
                                tally.unknownLeft.add(h.events.get(index).id());
                            }
                        }
                    }
                    toSend.forEach(e -> tally.deadLettered.add(e.id()));
                    return;
                }
                if (waiting || !resend.isEmpty()) {
                    sleep(waiting ? 200 : 50);
                }
            }
        }

        /**
         * The events of {@code toSend} (in poll order) that may go now: none on a key with an earlier write still
         * unresolved in a held outcome, nor after an event of its key that has to wait.
         */
        private static List<Event> sendable(List<Event> toSend, List<Held> held) {
            Map<Integer, Integer> firstUnresolved = new HashMap<>();
            for (Held h : held) {
                for (int index : h.pending) {
                    Event e = h.events.get(index);
                    firstUnresolved.merge(e.key(), e.id(), Math::min);
                }
            }
            List<Event> now = new ArrayList<>();
            Set<Integer> waitingKeys = new HashSet<>();
            for (Event e : toSend) {
                Integer first = firstUnresolved.get(e.key());
                if (waitingKeys.contains(e.key()) || (first != null && first < e.id())) {
                    waitingKeys.add(e.key());
                } else {
                    now.add(e);
                }
            }
            return now;
        }

        /** A bulk's events, its latest outcome (settles replace it) and the indexes not yet acknowledged or let go. */
        private static final class Held {
            final List<Event> events;
            final Set<Integer> pending = new java.util.TreeSet<>();
            WriteOutcome<Document> outcome;

            Held(List<Event> events, WriteOutcome<Document> outcome) {
                this.events = events;
                this.outcome = outcome;
                for (int i = 0; i < events.size(); i++) {
                    pending.add(i);
                }
            }
        }
    }

    /**
     * What the documents say about the events, accumulated over the checks: each check replays the events written so
     * far per key to what each document should hold ({@code base} and the {@code $inc}s after it) and compares with the
     * stored one. An expected event missing from it that was not dead-lettered is lost; an {@code $inc} listed more
     * than once was applied twice; a dead-lettered event that is there was applied anyway.
     */
    static final class Check {
        final Set<Integer> lost = new HashSet<>();
        final Set<Integer> twice = new HashSet<>();
        final Set<Integer> appliedDeadLettered = new HashSet<>();
        private final Set<Integer> deadLettered;

        Check(Set<Integer> deadLettered) {
            this.deadLettered = deadLettered;
        }

        /** Waits until no write runs on the set (a stalled first copy, a resend), then checks {@code written}. */
        void after(List<Event> written, MongoCollection<Document> stock, EmulatedReplicaSet cluster)
                throws InterruptedException {
            cluster.truth().awaitIdle(c -> c.namespace().equals(NAMESPACE), Duration.ofSeconds(30));
            cluster.awaitPrimary(Duration.ofSeconds(30));
            Map<Integer, List<Integer>> expected = new HashMap<>();
            for (Event event : written) {
                List<Integer> visible = expected.computeIfAbsent(event.key(), k -> new ArrayList<>());
                if (event.replacement()) {
                    visible.clear();
                }
                visible.add(event.id());
            }
            Set<Integer> applied = new HashSet<>();
            for (Document doc : stock.find(Filters.type("_id", "number"))) {
                Integer base = doc.getInteger("base");
                if (base != null) {
                    applied.add(base);
                }
                for (Integer inc : doc.getList("incs", Integer.class, List.of())) {
                    if (!applied.add(inc)) {
                        twice.add(inc);
                    }
                }
            }
            for (List<Integer> visible : expected.values()) {
                for (int id : visible) {
                    if (!applied.contains(id) && !deadLettered.contains(id)) {
                        lost.add(id);
                    }
                }
            }
            for (int id : deadLettered) {
                if (applied.contains(id)) {
                    appliedDeadLettered.add(id);
                }
            }
        }
    }

    static Map<String, Object> toJson(Settings settings, List<Row> rows) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("events", settings.events());
        json.put("pollSize", settings.pollSize());
        json.put("keys", settings.keys());
        json.put("socketTimeoutMs", settings.socketTimeoutMs());
        json.put("attempts", settings.appAttempts());
        json.put("seed", settings.seed());
        List<Object> results = new ArrayList<>();
        rows.forEach(r -> results.add(r.toJson()));
        json.put("results", results);
        return json;
    }

    static void print(Settings settings, List<Row> rows, PrintStream out) {
        out.printf(
                "%nsettle: %d events on %d keys ($inc and replacements), polls of %d as one ordered bulk, 3-member set,"
                        + " w: majority, socketTimeoutMS=%d; raw driver: the whole poll again up to %d times, then"
                        + " dead-lettered; guarded: the README's recipe (settle first), %d attempts%n",
                settings.events(),
                settings.keys(),
                settings.pollSize(),
                settings.socketTimeoutMs(),
                settings.appAttempts(),
                settings.appAttempts());
        out.printf(
                "%-8s %-20s %6s %8s %8s %12s %8s %8s %8s %10s %10s%n",
                "client",
                "fault",
                "lost",
                "twice",
                "deadLet",
                "appliedDL",
                "unknown",
                "resends",
                "settles",
                "ms/poll",
                "max ms");
        for (Row r : rows) {
            out.printf(
                    "%-8s %-20s %6d %8d %8d %12d %8d %8d %8d %10.1f %10.1f%n",
                    r.client(),
                    r.fault(),
                    r.lost(),
                    r.appliedTwice(),
                    r.deadLettered(),
                    r.appliedDeadLettered(),
                    r.unknownLeft(),
                    r.applicationResends(),
                    r.settles(),
                    r.msPerPoll(),
                    r.maxMsPerPoll());
        }
        out.println("goal (guarded): 0 lost, 0 applied twice, 0 unknown left, dead letters only for real write errors");
    }
}
