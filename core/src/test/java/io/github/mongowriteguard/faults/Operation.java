package io.github.mongowriteguard.faults;

import java.util.List;

/**
 * One call of a client: a single write, or a small bulk (ordered or not), run with one {@code execute} (guarded) or
 * one {@code bulkWrite} per attempt (raw).
 *
 * @param id     unique in the run, e.g. {@code "c1-42"}
 * @param client the client that runs it
 * @param writes its writes, in the caller's order
 */
public record Operation(String id, int client, List<Write> writes, boolean ordered) {
    public Operation {
        writes = List.copyOf(writes);
    }

    public boolean bulk() {
        return writes.size() > 1;
    }
}
