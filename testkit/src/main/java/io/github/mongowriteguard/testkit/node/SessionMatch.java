package io.github.mongowriteguard.testkit.node;

import java.util.Arrays;

/**
 * One pattern of {@code killSessions} as the server builds it ({@code KillAllSessionsByPattern}): a session id
 * and the {@code uid} (user digest) it must belong to. {@code killSessions} with explicit ids kills only the
 * caller's own sessions, unless the caller has {@code killAnySession} and names the {@code uid}
 * (mongodb/mongo {@code src/mongo/db/commands/kill_sessions_command.cpp}, {@code makeLogicalSessionIds}).
 *
 * @param id  the session id ({@code lsid.id} as text), or null for every session of {@code uid}
 * @param uid the user digest, or null for every user
 */
public record SessionMatch(String id, byte[] uid) {
    /** Every session of every user. */
    public static final SessionMatch ALL = new SessionMatch(null, null);

    boolean matches(String sessionId, byte[] sessionUid) {
        return (id == null || id.equals(sessionId)) && (uid == null || Arrays.equals(uid, sessionUid));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof SessionMatch that
                && java.util.Objects.equals(id, that.id)
                && Arrays.equals(uid, that.uid);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(id) * 31 + Arrays.hashCode(uid);
    }

    @Override
    public String toString() {
        return "SessionMatch{" + (id == null ? "any session" : id) + (uid == null ? ", any user" : ", one user") + "}";
    }
}
