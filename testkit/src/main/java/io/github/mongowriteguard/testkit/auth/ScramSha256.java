package io.github.mongowriteguard.testkit.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The server side of SCRAM-SHA-256 (RFC 5802 with RFC 7677's hash), written from the RFCs: the only SASL
 * mechanism the emulator offers ({@code saslSupportedMechs: ["SCRAM-SHA-256"]}), enough for the real driver to
 * authenticate. No channel binding; passwords are used as given (the driver applies SASLprep, which leaves ASCII
 * passwords unchanged).
 */
public final class ScramSha256 {
    /** The mechanism name the driver asks for. */
    public static final String MECHANISM = "SCRAM-SHA-256";
    /** The iteration count a server advertises by default (and the driver's minimum). */
    static final int ITERATIONS = 15_000;

    private static final SecureRandom RANDOM = new SecureRandom();

    private ScramSha256() {}

    /** What the server stores for one user: salt, iterations, StoredKey and ServerKey (never the password). */
    record Credentials(byte[] salt, int iterations, byte[] storedKey, byte[] serverKey) {
        static Credentials of(String password) {
            byte[] salt = new byte[28];
            RANDOM.nextBytes(salt);
            byte[] salted = pbkdf2(password, salt, ITERATIONS);
            byte[] clientKey = hmac(salted, "Client Key");
            return new Credentials(salt, ITERATIONS, sha256(clientKey), hmac(salted, "Server Key"));
        }
    }

    /** Thrown when a conversation fails; the node answers {@code AuthenticationFailed} (18). */
    public static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message, null, false, false);
        }
    }

    /** One authentication conversation on one connection: {@code saslStart}, then {@code saslContinue}. */
    public static final class Conversation {
        private final Users users;
        private final String db;
        private Users.StoredUser user;
        private String clientFirstBare;
        private String serverFirst;
        private String nonce;
        private Principal principal;
        private boolean finished;

        /**
         * Starts a conversation for a user of {@code db}.
         *
         * @param users the users to authenticate against
         * @param db    the database the client authenticates in
         */
        public Conversation(Users users, String db) {
            this.users = users;
            this.db = db;
        }

        /**
         * The server-first message for the client-first message.
         *
         * @param clientFirstMessage the client-first message: gs2 header {@code n,,}, user name and client nonce
         * @return the server-first message: combined nonce, salt and iteration count
         * @throws Failure for a malformed message or an unknown user
         */
        public byte[] start(byte[] clientFirstMessage) {
            String clientFirst = new String(clientFirstMessage, StandardCharsets.UTF_8);
            if (!clientFirst.startsWith("n,,")) {
                throw new Failure("the emulator supports SCRAM without channel binding only (gs2 header 'n,,')");
            }
            clientFirstBare = clientFirst.substring(3);
            Map<String, String> fields = fields(clientFirstBare);
            String name = fields.get("n");
            String clientNonce = fields.get("r");
            if (name == null || clientNonce == null) {
                throw new Failure("malformed SCRAM client-first message");
            }
            user = users.find(name.replace("=2C", ",").replace("=3D", "="), db);
            if (user == null) {
                throw new Failure("Authentication failed.");
            }
            byte[] serverNonce = new byte[24];
            RANDOM.nextBytes(serverNonce);
            nonce = clientNonce + Base64.getEncoder().encodeToString(serverNonce);
            serverFirst = "r=" + nonce + ",s="
                    + Base64.getEncoder().encodeToString(user.credentials().salt()) + ",i="
                    + user.credentials().iterations();
            return serverFirst.getBytes(StandardCharsets.UTF_8);
        }

        /**
         * Checks the client's proof and returns the server-final message.
         *
         * @param clientFinalMessage the client-final message, ending with the client proof
         * @return the server-final message with the server signature
         * @throws Failure when the message is malformed, the nonce differs or the proof is wrong
         */
        public byte[] finish(byte[] clientFinalMessage) {
            if (user == null) {
                throw new Failure("saslContinue before saslStart");
            }
            String clientFinal = new String(clientFinalMessage, StandardCharsets.UTF_8);
            int proofAt = clientFinal.lastIndexOf(",p=");
            if (proofAt < 0) {
                throw new Failure("malformed SCRAM client-final message");
            }
            String withoutProof = clientFinal.substring(0, proofAt);
            Map<String, String> fields = fields(withoutProof);
            if (!nonce.equals(fields.get("r"))) {
                throw new Failure("SCRAM nonce mismatch");
            }
            byte[] proof = Base64.getDecoder().decode(clientFinal.substring(proofAt + 3));
            String authMessage = clientFirstBare + "," + serverFirst + "," + withoutProof;
            byte[] clientSignature = hmac(user.credentials().storedKey(), authMessage);
            if (proof.length != clientSignature.length) {
                throw new Failure("Authentication failed.");
            }
            byte[] clientKey = new byte[proof.length];
            for (int i = 0; i < proof.length; i++) {
                clientKey[i] = (byte) (proof[i] ^ clientSignature[i]);
            }
            if (!MessageDigest.isEqual(sha256(clientKey), user.credentials().storedKey())) {
                throw new Failure("Authentication failed.");
            }
            principal = user.principal();
            finished = true;
            return ("v="
                            + Base64.getEncoder()
                                    .encodeToString(hmac(user.credentials().serverKey(), authMessage)))
                    .getBytes(StandardCharsets.UTF_8);
        }

        /**
         * The authenticated user once {@link #finish} succeeded, else null.
         *
         * @return the user, or null
         */
        public Principal principal() {
            return principal;
        }

        /** {@return whether {@link #finish} succeeded} */
        public boolean finished() {
            return finished;
        }
    }

    private static Map<String, String> fields(String message) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String part : message.split(",")) {
            int eq = part.indexOf('=');
            if (eq == 1) {
                fields.put(part.substring(0, 1), part.substring(2));
            }
        }
        return fields;
    }

    private static byte[] pbkdf2(String password, byte[] salt, int iterations) {
        try {
            PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, 256);
            return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
                    .generateSecret(spec)
                    .getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String text) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
