"""privacy: credentials, emails, internal hostnames and private IPs — anywhere in the article,
code blocks and front matter included. A credential is critical (a published secret is leaked);
an email address, a private IP or an internal hostname is a suggestion: it reveals something, but
articles show them as examples far more often than by mistake, and nothing is leaked for good.
A password in a link's query (`?pwd=…`, `?password=…`) is the link's access code, published so
readers can join (a public meeting): not reported. A key or token in a link's query is a
suggestion: a link the article asks readers to open is published on purpose, which a random value
cannot tell apart from a leak. Token formats (GitHub, Slack, AWS…) stay critical anywhere."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import re
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate

from agents.proofread.checkers.base import BaseChecker
from agents.proofread.schemas import Issue, ParsedArticle
from agents.proofread.text import PROMPT, finditer_by_runs, replace_spans


@dataclass(frozen=True)
class SecretPattern:
    name: str
    pattern: re.Pattern[str]
    what: str
    # For patterns that open with a run of characters (a URL scheme, a JWT segment): where a match
    # can start, and the run, so that a long word is not rescanned from each of its positions.
    start: re.Pattern[str] | None = None
    run: re.Pattern[str] | None = None

    def finditer(self, line: str) -> Iterator[re.Match[str]]:
        if self.start is None or self.run is None:
            return self.pattern.finditer(line)
        return finditer_by_runs(self.pattern, line, self.start, self.run)


SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern("private-key", re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----"), "a private key"),
    SecretPattern("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
                  "an AWS access key ID"),
    SecretPattern("aws-secret-key",
                  re.compile(r"(?i)aws.{0,20}?(?:secret|sk).{0,20}?[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
                  "an AWS secret access key"),
    SecretPattern("slack-token", re.compile(r"\bxox[abposr]-[0-9A-Za-z-]{10,}"), "a Slack token"),
    SecretPattern("slack-webhook",
                  re.compile(r"https://hooks\.slack\.com/services/T[0-9A-Z]{6,}/B[0-9A-Z]{6,}/[0-9A-Za-z]{16,}"),
                  "a Slack incoming-webhook URL"),
    SecretPattern("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b"),
                  "a GitHub token"),
    SecretPattern("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), "an OpenAI API key"),
    SecretPattern("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), "an Anthropic API key"),
    SecretPattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), "a Google API key"),
    SecretPattern("stripe-key", re.compile(r"\b(?:sk|rk)_live_[0-9A-Za-z]{20,}\b"), "a Stripe live key"),
    SecretPattern("discord-token", re.compile(r"\b[MNO][A-Za-z\d]{23,27}\.[\w-]{6}\.[\w-]{27,40}\b"),
                  "a Discord bot token"),
    SecretPattern("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
                  "a JSON Web Token", re.compile(r"\beyJ"), re.compile(r"[A-Za-z0-9_-]*")),
    SecretPattern("url-credentials", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s:/@]{3,})@[^\s/]+"),
                  "a password inside a URL", re.compile(r"\b[a-z]"), re.compile(r"[a-z0-9+.-]*")),
)

# `password = "…"`, `API_KEY: …`, `"token": "…"` with a value that looks random.
_ASSIGNED_VALUE = r"[\"']?\s*(?:=|:|=>)\s*[\"']?([A-Za-z0-9+/_\-.=~!@#$%^&*]{8,})[\"']?"
ASSIGNED_SECRET = re.compile(
    r"(?i)\b([\w.-]*(?:secret|token|passwd|password|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"client[_-]?secret|auth)[\w.-]*)" + _ASSIGNED_VALUE
)
# The access code of a shared link (a meeting's or a folder's passcode), as a query parameter's name.
LINK_PASSCODE = re.compile(r"(?i)pass|pwd")
REDIRECT_TOKEN = re.compile(r"(?i)redir(?:ect)?_token")
_ASSIGNED_START = re.compile(r"\b[\w.-]")
_ASSIGNED_RUN = re.compile(r"[\w.-]*")
_ASSIGNED_TAIL = re.compile(r"(?i)" + _ASSIGNED_VALUE)
PLACEHOLDER = re.compile(
    r"(?i)(example|sample|dummy|placeholder|your|xxx|yyy|\*\*\*|<|>|\.\.\.|…|changeme|redacted|"
    r"masked|hoge|fuga|piyo|foo|bar|test|fake|todo|replace|abcdef|123456|insecure|notsecure|\$\{|\{\{|env|getenv|process\.)"
)
EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?![\w-])")
_EMAIL_START = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]")
_EMAIL_RUN = re.compile(r"[A-Za-z0-9._%+-]*")
SAFE_EMAIL_DOMAINS = re.compile(
    r"(?i)(^|\.)(example\.(com|org|net|jp|co\.jp)|[a-z0-9-]+\.example|[a-z0-9-]+\.test|[a-z0-9-]+\.invalid|"
    r"users\.noreply\.github\.com|noreply\.github\.com|"
    # Identifiers written like addresses that no one reads mail at: a Google calendar's ID.
    r"group\.calendar\.google\.com|resource\.calendar\.google\.com)$"
)
# Not part of a longer dotted number (1.2.3.4.5) or a CIDR range; a full stop after it ends the
# sentence (`10.0.1.4.`), it is still an address.
IPV4 = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?!\d|\.\d|/\d)")
HOSTNAME = re.compile(
    r"(?<![\w.-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
    r"(?:internal|local|localdomain|corp|intranet|intra|lan|private|home\.arpa))\b(?![.-]\w)",
    re.I,
)
PUBLIC_INTERNAL_NAMES = re.compile(
    r"(?i)^(host\.docker\.internal|gateway\.docker\.internal|kubernetes\.docker\.internal|"
    r"metadata\.google\.internal|.*\.cluster\.local|(.*\.)?example\.[a-z.]+)$"
)
# `banana.local`, `raspberrypi.local`: one machine's multicast-DNS (Bonjour) name, answered only on
# its own LAN; it names a computer, not an organisation's network (`dc01.corp.local` still counts).
MDNS_NAME = re.compile(r"(?i)^[a-z0-9-]+\.local$")
# Code blocks whose lines are what a program printed, unless a line is a prompted command.
OUTPUT_LANGUAGES = {"text", "txt", "plaintext", "log", "output", "console", "shell-session", "terminal"}
_DOC_NETWORKS = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")]


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_random(value: str) -> bool:
    """Long enough and varied enough to be a generated secret rather than a word or a path, and
    not a placeholder written in base64 (`a251dEBleGFtcGxl…` is knut@example.com:123456abcdef)."""
    if len(value) < 16 or PLACEHOLDER.search(value) or PLACEHOLDER.search(base64_text(value)):
        return False
    if re.fullmatch(r"[a-z_]+|[A-Z_]+|[A-Za-z][a-z]+(?:[A-Z][a-z]+)+", value):
        return False  # identifiers: some_name, SOME_NAME, someName, and a type's SomeName (`API_KEY: ApiKeyType,`)
    if re.fullmatch(r"[0-9a-f]+", value):
        return len(value) >= 32 and shannon_entropy(value) >= 3.0
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return classes >= 2 and shannon_entropy(value) >= 3.5


_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def base64_text(value: str) -> str:
    """The printable ASCII text `value` encodes in base64 (a Kubernetes Secret's data, a Basic
    auth pair), or "" when it encodes none."""
    if not _BASE64.fullmatch(value):
        return ""
    try:
        text = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return ""
    return text if text.isprintable() else ""


@dataclass(frozen=True)
class Finding:
    kind: str
    what: str
    line: int
    start: int
    end: int
    value: str


def mask_value(value: str) -> str:
    """Enough of a secret to recognise it, not enough to use it."""
    if len(value) <= 8:
        return "****"
    return f"{value[:4]}…{value[-2:]}"


def assigned_secrets(line: str) -> Iterator[re.Match[str]]:
    """ASSIGNED_SECRET.finditer(line), without the assignments that hold no secret
    (`not_a_secret`). The name is the whole word before `=`/`:`, so the value part is checked once
    per word, and the name only from the word's first possible start (on `token.token.token…` the
    regex alone backtracks cubically)."""
    for match in finditer_by_runs(ASSIGNED_SECRET, line, _ASSIGNED_START, _ASSIGNED_RUN, _ASSIGNED_TAIL):
        if line[match.end(2) : match.end(2) + 1] == "(" or _DOTTED_NAME.fullmatch(match.group(2)):
            continue  # `token = auth.createToken(…)`, `token: vscode.CancellationToken`: code, not a value
        if line[: match.start(1)].endswith("$") and _CMDLET.fullmatch(match.group(2)):
            continue  # `$SecuredPassword = ConvertTo-SecureString …`: PowerShell calls a cmdlet
        if line.rfind("{{", 0, match.start(1)) > line.rfind("}}", 0, match.start(1)):
            continue  # `{{resolve:secretsmanager:…:SecretString:password}}`: a template's lookup, no literal
        if line[: match.start(1)].endswith("://"):
            continue  # `https://oauth2:$TOKEN@host`: a URL's user and password, which url-credentials judges
        if (after := line[match.end(2) : match.end(2) + 1]).isalpha() and not after.isascii():
            continue  # `apiKey: "EtherScanのAPIKey"`: words telling the reader what goes there, not a value
        if not not_a_secret(match.group(1), match.group(2)):
            yield match


# The last part of a setting's name that says it holds no secret: AUTH0_DOMAIN, CLIENT_ID,
# TOKEN_URL, secretName. (An OAuth client ID is public; its secret is not.)
_PUBLIC_PARTS = frozenset({
    "domain", "id", "url", "uri", "host", "hostname", "name", "endpoint", "issuer", "audience", "region",
    "type", "path", "file", "user", "username", "expiry", "expires", "ttl", "header", "prefix", "version",
    "scope", "scopes", "length", "count", "mode", "ref", "namespace", "account", "email", "mail",
    "authentication",  # `Authentication=ActiveDirectoryIntegrated` in a connection string: the method
    "sock", "socket",  # `SSH_AUTH_SOCK=~/.1password/agent.sock`: where an agent listens
})
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")
# Tokens an API hands out with each reply, which grant nothing: AWS's RequestToken and
# ClientRequestToken (idempotency), NextToken and ContinuationToken (pagination), PageToken, SyncToken,
# and the cancelToken an upload API returns to call the upload off.
_HANDED_OUT_TOKENS = frozenset({"request", "next", "page", "continuation", "pagination", "idempotency", "sync",
                                "cancel", "cancellation"})
# A value that names a secret rather than being one: a Kubernetes object (`runner-token-pd2mq`),
# a self-describing stand-in (`notion_api_key`, `my-secret`, `password123`, `token1234`).
_NAMES_SECRET = re.compile(r"(?i)(^|[-_.])(token|secret|password|passwd|key|apikey)([-_.]|$)|^(token|secret|password|passwd)\w*$")
# A setting named as a stand-in: SAMPLE_TOKEN, example_password, dummySecret, test_api_key.
_SAMPLE_PARTS = frozenset({"sample", "example", "dummy", "fake", "test", "demo"})
# Words joined by hyphens, no digits: a Kubernetes object's name (`secret: my-service-account`).
_OBJECT_NAME = re.compile(r"[a-z]{2,}(?:-[a-z]{2,})+")
# A PowerShell cmdlet's Verb-Noun name (ConvertTo-SecureString, Get-Credential).
_CMDLET = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*-[A-Z][A-Za-z]+")
# An attribute path (`config.channelSecret.value`, `T5Tokenizer.from_pretrained`): code, not a literal.
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
# A variable read instead of a value ($PASSWORD, ${TOKEN}), or a crypt(3) password hash ($6$salt$…).
_REFERENCE_OR_HASH = re.compile(r"^\$(?:\{?[A-Za-z_]\w*\}?$|(?:1|2[abxy]?|5|6|7|y|gy)\$)")


def not_a_secret(name: str, value: str) -> bool:
    """Whether `name = value` holds no secret although the name mentions one: the name ends in a
    public part (AUTH0_DOMAIN, CLIENT_ID), starts with `public` (publicKeyToken) or says it is a
    sample (SAMPLE_TOKEN); or the value names a secret or an object, spells the name itself, reads
    a variable or is a password hash."""
    parts = [part.lower() for part in _NAME_PARTS.findall(name)]
    if parts and (parts[-1] in _PUBLIC_PARTS or parts[0] == "public" or _SAMPLE_PARTS & set(parts)):
        return True
    if parts[-2:-1] and parts[-1] == "token" and parts[-2] in _HANDED_OUT_TOKENS:
        return True  # `"RequestToken": "8c98858b-…"` in an API's reply: a request's or a page's handle
    if len(name) >= 4 and name.lower() in value.lower():
        return True  # `slackBotToken: "/app/slackBotToken"` (a parameter's path), `auth0Config: Auth0Config` (a type)
    return bool(
        _NAMES_SECRET.search(value) or _REFERENCE_OR_HASH.match(value) or _OBJECT_NAME.fullmatch(value)
        or EMAIL.fullmatch(value)  # an account's address (…@developer.gserviceaccount.com) is an identity
    )


# A team's or a project's mailbox (RFC 2142 and its kin): an address that exists to be published.
CONTACT_MAILBOXES = frozenset({
    "team", "contact", "info", "hello", "support", "help", "security", "press", "media", "sales",
    "feedback", "abuse", "postmaster", "webmaster", "hostmaster", "inquiry", "inquiries", "office",
    "community", "maintainers", "opensource", "oss", "conduct", "privacy", "legal", "jobs", "careers",
})


def _mailto_link(line: str, start: int, end: int) -> bool:
    """The address at line[start:end] is a `mailto:` link's destination, or the text of one: the
    writer asks readers to write to it."""
    if line[:start].lower().endswith("mailto:"):
        return True
    return line[:start].endswith("[") and line[end:].lower().startswith("](mailto:")


def find_emails(line: str) -> Iterator[re.Match[str]]:
    """EMAIL.finditer(line), trying each word once rather than from each of its `%` (quadratic)."""
    return finditer_by_runs(EMAIL, line, _EMAIL_START, _EMAIL_RUN)


# The query parameter of an S3 pre-signed URL that carries the signing key's id: the URL is made to
# be handed out, and the id alone grants nothing.
PRESIGNED_CREDENTIAL = re.compile(r"(?i)[?&]X-Amz-Credential=$")


def find_secrets(line: str, number: int) -> list[Finding]:
    """Credential-shaped strings on one line (known token formats and random assigned values)."""
    found: list[Finding] = []
    for spec in SECRET_PATTERNS:
        for match in spec.finditer(line):
            group = 1 if match.groups() else 0
            value = match.group(group)
            if "EXAMPLE" in value or "EXAMPLE" in match.group(0) or PLACEHOLDER.search(value.lower().replace("sk-", "")):
                continue
            if spec.name == "url-credentials" and not _real_url_password(match.group(0), value):
                continue
            if spec.name == "jwt" and _expired_jwt(value):
                continue
            if spec.name == "aws-access-key" and PRESIGNED_CREDENTIAL.search(line[: match.start(group)]):
                continue  # a pre-signed URL (a download a tool printed) names its signer's key id, no secret
            if spec.name in ("private-key", "url-credentials") or not _is_placeholder_token(value):
                found.append(Finding(spec.name, spec.what, number, match.start(group), match.end(group), value))
    # Is a position inside one of the findings? The furthest end among findings starting at or
    # before it says so (a scan of all findings for each match is quadratic on a line of keys).
    taken = sorted((f.start, f.end) for f in found)
    starts = [a for a, _b in taken]
    furthest = list(accumulate((b for _a, b in taken), max))
    for match in assigned_secrets(line):
        value = match.group(2).rstrip(".,;")
        start = match.start(2)
        if _cut_short(match.group(2), line[match.end(2) :]) or _jwt_header(value) or _expired_jwt(value):
            continue  # an elided value, a JWT's header alone, a JWT past its `exp` (a CTF write-up's captured token)
        before = bisect_right(starts, start)
        if before and furthest[before - 1] > start:
            continue
        in_query = _in_url_query(line, match.start(1))
        if in_query:
            value = re.split(r"[&#]", value, maxsplit=1)[0]  # `?authuser=0&platform=ios`: the value is `0`
        if looks_random(value):
            if in_query:
                if LINK_PASSCODE.search(match.group(1)):
                    continue  # the link's own access code: whoever holds the link is meant to join
                if REDIRECT_TOKEN.fullmatch(match.group(1)):
                    continue  # youtube.com/redirect?…&redir_token=…: the redirector's own click token, in every copy of the link
                found.append(Finding("link-secret", f"a value passed as `{match.group(1)}` in a link", number,
                                     start, start + len(value), value))
            else:
                found.append(Finding("assigned-secret", f"a secret assigned to `{match.group(1)}`", number,
                                     start, start + len(value), value))
    return found


def _in_url_query(line: str, position: int) -> bool:
    """Whether `position` is in the query of a URL (`https://host/path?…&name=`): the URL runs
    back to the last space, bracket or quote before it."""
    start = max(line.rfind(c, 0, position) for c in " \t(<\"'[") + 1
    url = line[start:position]
    return "://" in url and "?" in url.split("://", 1)[1]


# Names that resolve only on the writer's own machine or network, or nowhere (RFC 6761 and 6762,
# RFC 8375's home.arpa, ICANN's .internal; Kubernetes' in-cluster `svc.cluster.local` ends in .local).
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa", ".lan", ".test", ".invalid", ".example")


def _real_url_password(url: str, password: str) -> bool:
    """postgres://postgres:postgres@localhost is a tutorial default, and so is a password for a
    host only a private network resolves (`app-db.svc.cluster.local`); a random password on a real
    host is a leak."""
    if _REFERENCE_OR_HASH.match(password):
        return False  # `http://$user:$encoded_pw@proxy…` in a script: the shell fills it in
    host = url.rsplit("@", 1)[1].split(":")[0].split("/")[0].lower()
    if (
        host in ("localhost", "127.0.0.1", "0.0.0.0") or "." not in host or "example" in host
        or host.endswith(_LOCAL_SUFFIXES)
    ):
        return looks_random(password)
    return len(password) >= 8 and not PLACEHOLDER.search(password)


def _cut_short(value: str, after: str) -> bool:
    """A value the writer elided (`"eyJhbGciOi...`, `sk_live_51H…`): what is shown opens nothing."""
    return value.endswith("..") or after.lstrip("\"'").startswith(("…", "..."))


def _jwt_header(value: str) -> bool:
    """One base64url segment that decodes to a JWT header (`{"alg": …}`): public by design, the
    part of a token that says how it is signed, not the token."""
    if not value.startswith("eyJ") or "." in value:
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    except (binascii.Error, ValueError, RecursionError):  # RecursionError: a forged `{"a":{"a":…` nested past the decoder
        return False
    return isinstance(header, dict) and "alg" in header


def _expired_jwt(token: str) -> bool:
    """Whether the JWT says it has expired (`exp` in its payload is past): the token a tutorial's
    local server issued in 2022 opens nothing any more. No `exp`, or one that cannot be read: not
    known to be expired; not three dot-separated segments: no JWT."""
    segments = token.split(".")
    if len(segments) != 3 or not token.startswith("eyJ"):
        return False
    payload = segments[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, ValueError, RecursionError):  # RecursionError: a forged `{"a":{"a":…` nested past the decoder
        return False
    expiry = claims.get("exp") if isinstance(claims, dict) else None
    return isinstance(expiry, (int, float)) and not isinstance(expiry, bool) and expiry < time.time()


def _is_placeholder_token(value: str) -> bool:
    body = re.sub(r"^[a-z]+[-_]", "", value)
    return len(set(body.lower())) <= 3  # sk-xxxxxxxx, AKIA0000000000000000


def redact(line: str) -> str:
    """The line with every secret-looking value masked, for quoting in reports."""
    for finding in sorted(find_secrets(line, 0), key=lambda f: f.start, reverse=True):
        line = line[: finding.start] + mask_value(finding.value) + line[finding.end :]
    return line


def is_private_ip(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    if address.is_loopback or address.is_unspecified or address.is_link_local:
        return False  # 127.0.0.1, 0.0.0.0, 169.254.169.254: the same everywhere, nothing revealed
    if any(address in network for network in _DOC_NETWORKS):
        return False
    return address.is_private


_HOME_ROUTER_NETWORK = ipaddress.ip_network("192.168.0.0/23")


def _home_router_default(text: str) -> bool:
    """An address in the subnets home routers hand out by default (192.168.0.0/24, 192.168.1.0/24):
    it reveals nothing about anyone's network."""
    try:
        return ipaddress.ip_address(text) in _HOME_ROUTER_NETWORK
    except ValueError:
        return False


# A source file in a public repository (a link that names its path: github.com/o/r/blob/ref/path).
REPOSITORY_FILE_LINK = re.compile(
    r"https?://(?:github\.com|gitlab\.com|bitbucket\.org)/[^/\s]+/[^/\s]+/(?:-/)?(?:blob|raw|src)/[^/\s]+/([^\s)\]>#?]+)"
    r"|https?://raw\.githubusercontent\.com/[^/\s]+/[^/\s]+/[^/\s]+/([^\s)\]>#?]+)"
)
# A path under a project's tests: a test folder (test/, spec/, fixtures/, testdata/) or a test file
# (config/test.exs, key_test.go, auth.spec.ts, test_keys.py).
TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|specs?|testdata|test_data|fixtures?|__tests__)(?:/|$)"
    r"|(?:^|[/_.-])(?:test|spec)(?:[_.-][^/]*)?\.[A-Za-z0-9]+$"
)
PARAGRAPH_BEFORE_LINES = 4


def published_test_key(article: ParsedArticle, number: int) -> bool:
    """Whether the private key on line `number` is a project's published test key: the paragraph
    just before it (before its code block) links a file under that project's tests in a public
    repository, the file the writer says the key comes from (round 126: reticulum's
    `config/test.exs`, used as is for a local development server). Its owner published it on
    purpose; it guards nothing."""
    block = next(
        (b for b in article.code_blocks if b.start_line < number and (b.end_line is None or number < b.end_line)), None
    )
    line = (block.start_line if block is not None else number) - 1
    while line >= article.body_start_line and not article.line(line).strip():
        line -= 1
    paragraph: list[str] = []
    while line >= article.body_start_line and article.line(line).strip() and len(paragraph) < PARAGRAPH_BEFORE_LINES:
        if article.kind(line) not in ("text", "list", "quote"):
            break
        paragraph.append(article.line(line))
        line -= 1
    return any(
        TEST_PATH.search(match.group(1) or match.group(2))
        for text in paragraph
        for match in REPOSITORY_FILE_LINK.finditer(text)
    )


# Key material: a run of base64 (or hex) as long as a key's lines are. A body of words
# (「...秘密鍵の中身をまるごと貼る...」, `<your key>`, `xxxx`) is a placeholder where a key would go.
KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{24,}")
KEY_BODY_LINES = 100  # a 4096-bit RSA key is about 50 lines of base64


def holds_key_material(article: ParsedArticle, number: int, start: int) -> bool:
    """Whether the private key that opens at column `start` of line `number` has key material in
    it, up to its `-----END` line (the same line for a key written with `\\n` escapes)."""
    body = [article.line(number)[start:]]
    line = number
    while "-----END" not in body[-1] and line < min(article.line_count, number + KEY_BODY_LINES):
        line += 1
        body.append(article.line(line))
    return any(KEY_MATERIAL.search(text) for text in body)


def _context_is_version(line: str, start: int) -> bool:
    before = line[max(0, start - 12) : start].lower()
    return bool(re.search(r"(v|version|ver\.?|バージョン)\s*$", before))


class PrivacyChecker(BaseChecker):
    category = "privacy"
    status_text = "Looking for secrets and personal data…"
    status_text_ja = "秘密情報と個人情報を探しています…"

    def rules(self, article: ParsedArticle) -> list[Issue]:
        issues: list[Issue] = []
        private_key_open = False
        output = program_output_lines(article)
        for number, line in enumerate(article.lines, start=1):
            if private_key_open:
                if "-----END" in line:
                    private_key_open = False
                continue
            if line.isspace() or not line:
                continue  # nothing to find; an article can be thousands of such lines
            for finding in find_secrets(line, number):
                if finding.kind == "private-key" and "-----END" not in line:
                    private_key_open = True
                if finding.kind == "private-key" and (
                    published_test_key(article, number) or not holds_key_material(article, number, finding.end)
                ):
                    continue  # a project's published test key, or a placeholder between the key's markers
                shown = "" if finding.kind == "private-key" else f" ({mask_value(finding.value)})"
                if finding.kind == "link-secret":
                    issues.append(self.issue(
                        article, "suggestion", number,
                        f"The article contains {finding.what}{shown}.",
                        "If the link is not meant for every reader, remove the value and rotate it; a "
                        "passcode published on purpose (a public meeting's) can stay.",
                        "Anything published in an article is public; a link's query is often a "
                        "deliberate invitation, sometimes a leaked key.",
                        "rule:link-secret",
                    ))
                    continue
                issues.append(self.issue(
                    article, "critical", number,
                    f"The article contains {finding.what}{shown}.",
                    "Remove it and replace it with a placeholder such as YOUR_API_KEY, then revoke/rotate "
                    "the credential: it may already have been copied.",
                    "Anything published in an article is public and scraped by bots within minutes.",
                    f"rule:{finding.kind}",
                ))
            issues += self._personal(article, number, line, number in output)
        return issues

    def _personal(self, article: ParsedArticle, number: int, line: str, output: bool) -> list[Issue]:
        """Emails everywhere; private IPs and internal hostnames only where the writer wrote them,
        not in what a program printed (a log's client address, the host a logger names)."""
        issues = []
        for match in find_emails(line):
            address = match.group(0)
            domain = address.rsplit("@", 1)[1]
            if SAFE_EMAIL_DOMAINS.search(domain) or re.search(r"\.(png|jpe?g|gif|svg|webp)$", domain, re.I):
                continue
            if line[: match.start()].endswith("://"):
                continue  # user info of a URL (https://token@host): a token, reported above
            local = address.split("@", 1)[0]
            if local.lower() in {"git", "noreply", "no-reply", "user", "you", "name"}:
                continue
            if local.lower() in CONTACT_MAILBOXES or _mailto_link(line, match.start(), match.end()):
                continue  # an address published to be written to: nothing leaks by printing it
            if line[: match.start()].endswith("@"):
                continue  # @name@instance.social: a Fediverse handle, not an address
            if _invited(line[: match.start()]):
                continue  # "you can mail me at …", 「…までご連絡ください」: given to be written to
            issues.append(self.issue(
                article, "suggestion", number, f"The article contains an email address ({local[:2]}…@{domain}).",
                "Replace it with an address at example.com (reserved for documentation), e.g. user@example.com.",
                "Published addresses are harvested for spam and phishing; a work address also reveals "
                "your employer's mail domain.",
                "rule:email",
            ))
        if output:
            return issues
        for match in IPV4.finditer(line):
            address = match.group(1)
            if _home_router_default(address):
                continue  # 192.168.0.x / 192.168.1.x: every home LAN's addresses, the usual example
            if is_private_ip(address) and not _context_is_version(line, match.start()):
                issues.append(self.issue(
                    article, "suggestion", number, f"The article contains a private IP address ({address}).",
                    "Use an address from a documentation range such as 192.0.2.10 (RFC 5737), or a placeholder.",
                    "Private addresses reveal the layout of the network the article was written from.",
                    "rule:private-ip",
                ))
        for match in HOSTNAME.finditer(line):
            host = match.group(1)
            if PUBLIC_INTERNAL_NAMES.match(host) or MDNS_NAME.match(host):
                continue
            if "@" in line[max(0, match.start() - 1) : match.start()]:
                continue
            issues.append(self.issue(
                article, "suggestion", number, f"The article contains an internal hostname ({host}).",
                "Replace it with a neutral name such as app.example.internal or server.example.com.",
                "Internal hostnames reveal your organisation's infrastructure and naming scheme.",
                "rule:internal-hostname",
            ))
        return issues


def program_output_lines(article: ParsedArticle) -> set[int]:
    """The lines of code blocks that show what a program printed: every line but the prompted
    commands of a terminal transcript, and the lines of an untagged or text/log/console block."""
    lines: set[int] = set()
    for block in article.code_blocks:
        content = block.content.split("\n")
        prompted = [bool(PROMPT.match(line)) for line in content]
        if not any(prompted) and block.language is not None and block.language not in OUTPUT_LANGUAGES:
            continue
        lines.update(block.content_start_line + offset for offset, command in enumerate(prompted) if not command)
    return lines


def redact_personal(line: str) -> str:
    """The line with emails, private IPs and internal hostnames masked, for quoting."""
    line = replace_spans(line, [(m.start(), m.end(), "***@" + m.group(0).rsplit("@", 1)[1]) for m in find_emails(line)])
    line = IPV4.sub(lambda m: "x.x.x.x" if is_private_ip(m.group(1)) else m.group(0), line)
    return HOSTNAME.sub(lambda m: m.group(0) if PUBLIC_INTERNAL_NAMES.match(m.group(1)) else "***.internal", line)


# Words that invite the reader to write: an address after them in the same sentence was given on
# purpose. Not a configuration key (`user.email`, `email:`), where an address may have slipped in.
_INVITATION = re.compile(
    r"(?i)(?<![.\w-])(?:e-?mail|mail|contact|reach|write to)(?![.:=_\w\"'])|メール|連絡|問い合わせ"
)


def _invited(before: str) -> bool:
    sentence = re.split(r"[.!?]\s|[。！？]", before)[-1]
    return _INVITATION.search(sentence) is not None

