package io.github.mongowriteguard.kafka.connect;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What happened to each record of a counting workload: records numbered 0 to {@code records - 1}, each an {@code $inc}
 * upsert of its key that also increments its own mark {@code r.<number>} in the key's document
 * ({@link EventWriteModelStrategy} with an {@code r} field), so the documents say how many times each record applied;
 * the dead-letter queue says which records were reported. Public, in the module's test jar, for the lab.
 *
 * @param records             records produced
 * @param applied             records whose mark is at least 1
 * @param lost                records neither applied nor dead-lettered
 * @param appliedTwice        records applied more than once
 * @param deadLettered        records in the dead-letter queue (each counted once)
 * @param appliedDeadLettered records in the dead-letter queue that applied all the same
 */
public record RecordLedger(
        int records, int applied, int lost, int appliedTwice, int deadLettered, int appliedDeadLettered) {

    /** The field holding each record's applications. */
    public static final String MARKS = "r";

    /** The event of record {@code number}: an {@code $inc} of 1 on {@code key}, marked with the record's number. */
    public static String event(String key, long number) {
        return "{\"_id\": \"" + key + "\", \"op\": \"inc\", \"n\": 1, \"r\": " + number + "}";
    }

    /** How many times each record applied, by number, from the documents' marks. */
    public static Map<Long, Integer> applications(List<BsonDocument> documents) {
        Map<Long, Integer> counts = new HashMap<>();
        for (BsonDocument document : documents) {
            BsonValue marks = document.get(MARKS);
            if (marks != null && marks.isDocument()) {
                marks.asDocument()
                        .forEach((number, count) -> counts.merge(
                                Long.parseLong(number), (int) count.asNumber().longValue(), Integer::sum));
            }
        }
        return counts;
    }

    /** The record numbers of dead-lettered values (the records' JSON, as {@link #event} wrote them). */
    public static Set<Long> numbers(List<String> deadLetteredValues) {
        Set<Long> numbers = new HashSet<>();
        for (String value : deadLetteredValues) {
            BsonDocument document = BsonDocument.parse(value);
            if (document.containsKey(MARKS)) {
                numbers.add(document.getNumber(MARKS).longValue());
            }
        }
        return numbers;
    }

    /** The ledger of records {@code 0..records-1} from the documents and the dead-lettered record numbers. */
    public static RecordLedger of(int records, List<BsonDocument> documents, Set<Long> deadLettered) {
        Map<Long, Integer> applications = applications(documents);
        int applied = 0;
        int lost = 0;
        int twice = 0;
        int appliedDeadLettered = 0;
        for (long r = 0; r < records; r++) {
            int count = applications.getOrDefault(r, 0);
            boolean reported = deadLettered.contains(r);
            applied += count > 0 ? 1 : 0;
            lost += count == 0 && !reported ? 1 : 0;
            twice += count > 1 ? 1 : 0;
            appliedDeadLettered += count > 0 && reported ? 1 : 0;
        }
        return new RecordLedger(records, applied, lost, twice, deadLettered.size(), appliedDeadLettered);
    }

    /** The record numbers below {@code committed} that did not apply exactly once and were not dead-lettered. */
    public static List<Long> notAppliedOnce(List<Long> numbersBelowCommitted, Map<Long, Integer> applications) {
        List<Long> wrong = new ArrayList<>();
        for (long r : numbersBelowCommitted) {
            if (applications.getOrDefault(r, 0) != 1) {
                wrong.add(r);
            }
        }
        return wrong;
    }
}
