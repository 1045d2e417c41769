"""The client: every operation of the contract, grouped by resource."""

import collections
import datetime as _dt
import io
import os
import time
import zipfile
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from . import _generated as m
from ._http import Transport, operation
from .errors import AssentError
from .verify import DecisionClaims, verify_decision_token

Duration = Union[int, float, _dt.timedelta]

ONE_DAY = _dt.timedelta(days=1)

# A report's content beyond this goes through an upload ticket, not the
# JSON body (which takes 2 MB of files at most).
INLINE_LIMIT = 1_500_000


class WaitTimeout(TimeoutError):
    """wait() ran out of time while the request was still pending; request
    is its last read, never settled."""

    def __init__(self, request: Any, waited: float):
        super().__init__("still %s after %.0f s" % (getattr(request, "status", "pending"), waited))
        self.request = request


def _seconds(d: Duration) -> float:
    return d.total_seconds() if isinstance(d, _dt.timedelta) else float(d)


def _time(value: Union[str, _dt.datetime, None]) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None:
        raise ValueError("give an aware datetime (with tzinfo), not a naive one")
    return value.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _expiry(expires_in: Optional[Duration], expires_at: Union[str, _dt.datetime, None]) -> Optional[str]:
    if expires_at is not None:
        return _time(expires_at)
    if expires_in is None:
        return None
    return _time(_dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(seconds=_seconds(expires_in)))


def _body(model: type, **fields: Any) -> Dict[str, Any]:
    """The JSON body of model from snake_case fields, None left out. An
    unknown field is a TypeError naming it."""
    return model(**{k: v for k, v in fields.items() if v is not None}).to_dict()


class _Resource:
    def __init__(self, client: "Client"):
        self._client = client
        self._t = client._transport

    def _call(self, op_id: str, path: Optional[Mapping[str, Any]] = None, query: Optional[Mapping[str, Any]] = None,
              body: Any = None, **kw: Any) -> Any:
        return self._t.request(op_id, path, query, body, **kw)[1]

    def _pages(self, op_id: str, path: Optional[Mapping[str, Any]] = None, query: Optional[Mapping[str, Any]] = None,
               limit: Optional[int] = None) -> Iterator[Any]:
        """Every item of a list, page after page."""
        q = dict(query or {})
        if limit is not None:
            q["limit"] = limit
        while True:
            page = self._call(op_id, path, q)
            for item in page.data or []:
                yield item
            if not page.next_cursor:
                return
            q["cursor"] = page.next_cursor

    def _wait(self, get: Callable[[Optional[str]], Any], pending: str, timeout: Duration) -> Any:
        """Long-poll until the request leaves pending or the time is up. A
        dropped connection or a refusal to hold one more long-poll is
        retried until the deadline; only a settled read is returned."""
        start = time.monotonic()
        deadline = start + _seconds(timeout)
        last = None
        while True:
            wait = max(0, min(60, int(deadline - time.monotonic())))
            try:
                last = get("%ds" % wait)
            except AssentError as e:
                if e.status not in (0, 429) and e.status < 500:
                    raise
                if time.monotonic() >= deadline:
                    raise
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
                continue
            if last.status != pending:
                return last
            # Less than a second left: one more poll would return at once.
            if wait == 0 or time.monotonic() >= deadline:
                raise WaitTimeout(last, time.monotonic() - start)


class Approvals(_Resource):
    """Ask a person before an action (scope approvals:*)."""

    @operation("createApproval")
    def create(self, title: str, input: Optional[Mapping[str, Any]] = None, *, expires_in: Optional[Duration] = ONE_DAY,
               expires_at: Union[str, _dt.datetime, None] = None, idempotency_key: Optional[str] = None, **fields: Any) -> m.Approval:
        """Create a pending approval. It expires after expires_in (one day
        unless given; None leaves it to the organisation's maximum) or at
        expires_at. fields are the rest of ApprovalCreate, snake_case:
        description, risk, approvers, editable_fields, callback_url, …"""
        expiry = self._client._expiry_for(idempotency_key, expires_in, expires_at)
        body = _body(m.ApprovalCreate, title=title, input=input, expires_at=expiry, **fields)
        return self._call("createApproval", body=body, idempotency_key=idempotency_key)

    @operation("getApproval")
    def get(self, id: str) -> m.Approval:
        return self._call("getApproval", {"id": id})

    @operation("getApproval")
    def wait(self, id: str, timeout: Duration = 300) -> m.Approval:
        """The approval once it is no longer pending (approved, rejected,
        expired or cancelled). Raises WaitTimeout when timeout passes first."""
        return self._wait(lambda w: self._call("getApproval", {"id": id}, {"wait": w}, timeout=75), "pending", timeout)

    @operation("listApprovals")
    def list(self, *, status: Optional[str] = None, external_id: Optional[str] = None, executed: Optional[bool] = None,
             limit: Optional[int] = None) -> Iterator[m.Approval]:
        """Every approval, newest first, fetching pages as it goes; executed
        False lists the approved ones nobody reported as run, True those
        reported."""
        ran = None if executed is None else ("true" if executed else "false")
        return self._pages("listApprovals", None, {"status": status, "externalId": external_id, "executed": ran}, limit)

    @operation("cancelApproval")
    def cancel(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Approval:
        return self._call("cancelApproval", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("decideApproval")
    def decide(self, id: str, decision: str, *, corrections: Optional[Mapping[str, Any]] = None, note: Optional[str] = None,
               reason: Optional[str] = None, idempotency_key: Optional[str] = None) -> m.Approval:
        """A person's decision (member token): approve (with corrections to
        editable fields) or reject."""
        body = _body(m.DecisionCreate, decision=decision, corrections=corrections, note=note, reason=reason)
        return self._call("decideApproval", {"id": id}, body=body, idempotency_key=idempotency_key)

    @operation("askQuestion")
    def ask(self, id: str, question: str, *, idempotency_key: Optional[str] = None) -> m.Question:
        """An approver asks the requester a question (member token)."""
        return self._call("askQuestion", {"id": id}, body=_body(m.QuestionCreate, question=question), idempotency_key=idempotency_key)

    @operation("answerQuestion")
    def answer(self, id: str, question_id: str, answer: str, *, idempotency_key: Optional[str] = None) -> m.Approval:
        """The requester answers an approver's question."""
        body = _body(m.AnswerCreate, question_id=question_id, answer=answer)
        return self._call("answerQuestion", {"id": id}, body=body, idempotency_key=idempotency_key)


class Collections(_Resource):
    """Requests for information: typed questions to people."""

    @operation("createCollection")
    def create(self, title: str, questions: Sequence[Union[m.CollectionQuestionCreate, Mapping[str, Any]]], respondents: Sequence[str], *,
               expires_in: Optional[Duration] = ONE_DAY, expires_at: Union[str, _dt.datetime, None] = None,
               due_at: Union[str, _dt.datetime, None] = None, idempotency_key: Optional[str] = None, **fields: Any) -> m.Collection:
        qs = [q if isinstance(q, m.CollectionQuestionCreate) else m.CollectionQuestionCreate.from_dict(q) for q in questions]
        body = _body(m.CollectionCreate, title=title, questions=qs, respondents=list(respondents),
                     expires_at=self._client._expiry_for(idempotency_key, expires_in, expires_at), due_at=_time(due_at), **fields)
        return self._call("createCollection", body=body, idempotency_key=idempotency_key)

    @operation("getCollection")
    def get(self, id: str) -> m.Collection:
        return self._call("getCollection", {"id": id})

    @operation("getCollection")
    def wait(self, id: str, timeout: Duration = 300) -> m.Collection:
        """The collection once it is no longer open (complete, expired or
        cancelled); WaitTimeout when timeout passes first."""
        return self._wait(lambda w: self._call("getCollection", {"id": id}, {"wait": w}, timeout=75), "open", timeout)

    @operation("listCollections")
    def list(self, *, status: Optional[str] = None, external_id: Optional[str] = None, flow_id: Optional[str] = None,
             limit: Optional[int] = None) -> Iterator[m.Collection]:
        return self._pages("listCollections", None, {"status": status, "externalId": external_id, "flowId": flow_id}, limit)

    @operation("cancelCollection")
    def cancel(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Collection:
        return self._call("cancelCollection", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("replyToCollection")
    def reply(self, id: str, answers: Mapping[str, Any], *, submit: bool = False, idempotency_key: Optional[str] = None) -> m.Collection:
        """A respondent's reply (member token): a draft, as in the API,
        unless submit=True."""
        body = _body(m.ReplyCreate, answers=dict(answers), submit=submit)
        return self._call("replyToCollection", {"id": id}, body=body, idempotency_key=idempotency_key)


class Reviews(_Resource):
    """Verdicts from people on a version of a report."""

    @operation("createReview")
    def create(self, title: str, report_id: str, reviewers: Sequence[str], *, expires_in: Optional[Duration] = ONE_DAY,
               expires_at: Union[str, _dt.datetime, None] = None, idempotency_key: Optional[str] = None, **fields: Any) -> m.Review:
        body = _body(m.ReviewCreate, title=title, report_id=report_id, reviewers=list(reviewers),
                     expires_at=self._client._expiry_for(idempotency_key, expires_in, expires_at), **fields)
        return self._call("createReview", body=body, idempotency_key=idempotency_key)

    @operation("getReview")
    def get(self, id: str) -> m.Review:
        return self._call("getReview", {"id": id})

    @operation("getReview")
    def wait(self, id: str, timeout: Duration = 300) -> m.Review:
        """The review once it is no longer open; WaitTimeout otherwise."""
        return self._wait(lambda w: self._call("getReview", {"id": id}, {"wait": w}, timeout=75), "open", timeout)

    @operation("listReviews")
    def list(self, *, status: Optional[str] = None, external_id: Optional[str] = None, flow_id: Optional[str] = None,
             report_id: Optional[str] = None, limit: Optional[int] = None) -> Iterator[m.Review]:
        return self._pages("listReviews", None, {"status": status, "externalId": external_id, "flowId": flow_id, "reportId": report_id}, limit)

    @operation("cancelReview")
    def cancel(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Review:
        return self._call("cancelReview", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("reviewVerdict")
    def verdict(self, id: str, verdict: str, *, note: Optional[str] = None, idempotency_key: Optional[str] = None) -> m.Review:
        """A reviewer's verdict (member token): approved or changes_requested."""
        return self._call("reviewVerdict", {"id": id}, body=_body(m.VerdictCreate, verdict=verdict, note=note), idempotency_key=idempotency_key)


class Comments(_Resource):
    """Threads on reports, and revision briefs."""

    @operation("listReportComments")
    def list(self, report: str) -> m.ThreadList:
        return self._call("listReportComments", {"idOrSlug": report})

    @operation("listOpenComments")
    def open(self, *, limit: Optional[int] = None) -> Iterator[m.Thread]:
        """Every open thread the caller may read, on every report."""
        return self._pages("listOpenComments", None, None, limit)

    @operation("postComment")
    def post(self, report: str, body: str, *, idempotency_key: Optional[str] = None, **fields: Any) -> m.Thread:
        """A new thread (quote, or the whole report) or, with thread_id, a reply."""
        return self._call("postComment", {"idOrSlug": report}, body=_body(m.CommentCreate, body=body, **fields), idempotency_key=idempotency_key)

    @operation("retractComment")
    def retract(self, report: str, comment_id: str) -> None:
        self._call("retractComment", {"idOrSlug": report, "commentId": comment_id})

    @operation("getCommentImage")
    def image(self, report: str, sha256: str) -> bytes:
        return self._call("getCommentImage", {"idOrSlug": report, "sha256": sha256})

    @operation("resolveThread")
    def resolve(self, thread_id: str, note: Optional[str] = None, *, idempotency_key: Optional[str] = None) -> m.Thread:
        return self._call("resolveThread", {"threadId": thread_id}, body=_body(m.ThreadResolve, note=note), idempotency_key=idempotency_key)

    @operation("createRevisionBrief")
    def revision_brief(self, report: str, thread_ids: Optional[Sequence[str]] = None, *, idempotency_key: Optional[str] = None) -> m.RevisionBrief:
        body = _body(m.RevisionBriefCreate, thread_ids=list(thread_ids) if thread_ids is not None else None)
        return self._call("createRevisionBrief", {"idOrSlug": report}, body=body, idempotency_key=idempotency_key)


class Gate(_Resource):
    """The action gate (scope gate:check)."""

    @operation("checkGate")
    def check(self, action: str, input: Optional[Mapping[str, Any]] = None, *, flow_id: Optional[str] = None,
              external_id: Optional[str] = None, idempotency_key: Optional[str] = None) -> m.GateAnswer:
        """Ask before running a registered action: allowed (with a decision
        token) or approval_required (with the approval); a denial is
        AssentError 403 gate_denied."""
        body = _body(m.GateCheckRequest, action=action, input=input, flow_id=flow_id, external_id=external_id)
        return self._call("checkGate", body=body, idempotency_key=idempotency_key)


class Receipts(_Resource):
    """Execution receipts (scope receipts:write): what ran of what a
    decision token allowed."""

    @operation("createReceipt")
    def create(self, decision_token: str, input: Optional[Mapping[str, Any]], outcome: str, *,
               started_at: Union[str, _dt.datetime], finished_at: Union[str, _dt.datetime], result: Any = None,
               idempotency_key: Optional[str] = None) -> m.Receipt:
        """Report a run: input is what ran (None for an approval without
        input), outcome succeeded or failed. A token takes one receipt:
        AssentError 409 receipt_exists for a second (its receipt the
        token's, by id and times only), 409 input_mismatch (recorded all
        the same, its receipt this one) when input is not the one approved;
        403 forbidden unless the token was issued to this key or person or
        its action names this key among its executors."""
        body = _body(m.ReceiptCreate, decision_token=decision_token, outcome=outcome, result=result,
                     started_at=_time(started_at), finished_at=_time(finished_at))
        body["input"] = dict(input) if input is not None else None  # null is sent, not left out
        return self._call("createReceipt", body=body, idempotency_key=idempotency_key)


class Mandates(_Resource):
    """Standing mandates: a person's approval, given once, of the gate checks
    of one action within a condition, agent keys, a budget per window and
    its times. Granted with a member token (approvals:write); a check one
    covers is allowed, its answer naming it (mandate_id)."""

    @operation("grantMandate")
    def grant(self, action: str, budget: Union[m.MandateGrantBudget, Mapping[str, Any]], expires_at: Union[str, _dt.datetime], *,
              condition: Optional[str] = None, agents: Optional[Sequence[str]] = None,
              starts_at: Union[str, _dt.datetime, None] = None, note: Optional[str] = None,
              idempotency_key: Optional[str] = None) -> m.Mandate:
        """budget: {"count": n, "sum": {"field": f, "max": x}, "window":
        "hour" | "day" | "week" | "mandate"}, a count, a sum or both.
        agents: agent key ids (none: every agent key). A mandate beyond
        the granter's authority is AssentError 403 forbidden naming action."""
        body = _body(m.MandateGrant, action=action, budget=budget, expires_at=_time(expires_at), condition=condition,
                     agents=list(agents) if agents is not None else None, starts_at=_time(starts_at), note=note)
        return self._call("grantMandate", body=body, idempotency_key=idempotency_key)

    @operation("listMandates")
    def list(self, *, live: Optional[bool] = None, limit: Optional[int] = None) -> Iterator[m.Mandate]:
        """Newest first; live=True leaves out the revoked and expired."""
        return self._pages("listMandates", None, {"live": live}, limit)

    @operation("getMandate")
    def get(self, id: str) -> m.Mandate:
        return self._call("getMandate", {"id": id})

    @operation("revokeMandate")
    def revoke(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Mandate:
        """At once; one already revoked or expired is AssentError 409 invalid_state."""
        return self._call("revokeMandate", {"id": id}, idempotency_key=idempotency_key)


class Flows(_Resource):
    """Flows group the requests of one job, with their evidence."""

    @operation("createFlow")
    def create(self, title: str, *, external_id: Optional[str] = None, idempotency_key: Optional[str] = None) -> m.Flow:
        return self._call("createFlow", body=_body(m.FlowCreate, title=title, external_id=external_id), idempotency_key=idempotency_key)

    @operation("getFlow")
    def get(self, id: str) -> m.Flow:
        return self._call("getFlow", {"id": id})

    @operation("completeFlow")
    def complete(self, id: str, *, idempotency_key: Optional[str] = None) -> None:
        self._call("completeFlow", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("cancelFlow")
    def cancel(self, id: str, *, idempotency_key: Optional[str] = None) -> None:
        self._call("cancelFlow", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("getFlowEvidence")
    def evidence(self, id: str, *, format: str = "json") -> Union[m.Evidence, bytes]:
        """The signed evidence export (format json), or the timeline as CSV bytes."""
        return self._call("getFlowEvidence", {"id": id}, {"format": format})


def _read_path(path: str) -> "tuple[bytes, str]":
    """A file or folder as one upload: an HTML file as it is, a ZIP as it
    is, a folder zipped (it must hold index.html)."""
    if os.path.isdir(path):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for root, _, names in os.walk(path):
                for name in sorted(names):
                    full = os.path.join(root, name)
                    z.write(full, os.path.relpath(full, path).replace(os.sep, "/"))
        return buf.getvalue(), "application/zip"
    with open(path, "rb") as f:
        data = f.read()
    if path.lower().endswith(".zip"):
        return data, "application/zip"
    return data, "text/html"


class Reports(_Resource):
    """Published HTML reports: versions, sharing, datasets, analytics."""

    def _content(self, content: Optional[str], files: Optional[Mapping[str, str]], path: Optional[str]) -> Dict[str, Any]:
        """The content fields of a publish: inline when small, else through
        an upload ticket (uploaded here)."""
        given = [x for x in (content, files, path) if x is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of content, files and path")
        if path is not None:
            data, ctype = _read_path(path)
            if ctype == "text/html" and len(data) <= INLINE_LIMIT:
                try:
                    return {"content": data.decode("utf-8")}
                except UnicodeDecodeError:
                    pass
            return {"uploadId": self.upload(data, ctype).upload_id}
        if content is not None:
            if len(content.encode("utf-8")) <= INLINE_LIMIT:
                return {"content": content}
            return {"uploadId": self.upload(content.encode("utf-8"), "text/html").upload_id}
        assert files is not None
        inline = [m.InlineFile(path=p, content=c).to_dict() for p, c in files.items()]
        if sum(len(c.encode("utf-8")) for c in files.values()) <= INLINE_LIMIT:
            return {"files": inline}
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for p, c in files.items():
                z.writestr(p, c)
        return {"uploadId": self.upload(buf.getvalue(), "application/zip").upload_id}

    @operation("createUpload", "putUpload")
    def upload(self, data: bytes, content_type: str = "text/html") -> m.Upload:
        """Take an upload ticket and PUT data (an HTML file or a ZIP, up to
        100 MB) to it; publish with its upload_id."""
        ticket = self._call("createUpload", body={})
        self._t.request("putUpload", body=data, content_type=content_type, url=ticket.upload_url, auth=False)
        return ticket

    @operation("createReport")
    def create(self, title: str, *, content: Optional[str] = None, files: Optional[Mapping[str, str]] = None, path: Optional[str] = None,
               idempotency_key: Optional[str] = None, **fields: Any) -> m.Report:
        """Publish a new report from content (one HTML document), files
        ({path: text}, holding index.html) or path (an HTML file, a ZIP or a
        folder). Large content goes through an upload ticket by itself.
        fields: slug, audience, classification, living, flow_id, change_summary."""
        body = _body(m.ReportCreate, title=title, **fields)
        body.update(self._content(content, files, path))
        return self._call("createReport", body=body, idempotency_key=idempotency_key)

    @operation("publishVersion")
    def publish(self, report: str, *, content: Optional[str] = None, files: Optional[Mapping[str, str]] = None, path: Optional[str] = None,
                expected_version: Optional[int] = None, change_summary: Optional[str] = None,
                idempotency_key: Optional[str] = None) -> m.Report:
        """Publish a new version of report (id or slug). With
        expected_version, refused with version_conflict unless it is still
        the report's latest_version."""
        body = _body(m.VersionCreate, expected_version=expected_version, change_summary=change_summary)
        body.update(self._content(content, files, path))
        return self._call("publishVersion", {"idOrSlug": report}, body=body, idempotency_key=idempotency_key)

    @operation("getReport")
    def get(self, report: str) -> m.Report:
        return self._call("getReport", {"idOrSlug": report})

    @operation("listReports")
    def list(self, *, flow_id: Optional[str] = None, archived: Optional[bool] = None, limit: Optional[int] = None) -> Iterator[m.Report]:
        return self._pages("listReports", None, {"flowId": flow_id, "archived": archived}, limit)

    @operation("updateReport")
    def update(self, report: str, *, classification: Optional[str] = None, show_viewers: Optional[bool] = None) -> m.Report:
        return self._call("updateReport", {"idOrSlug": report}, body=_body(m.ReportPatch, classification=classification, show_viewers=show_viewers))

    @operation("listVersions")
    def versions(self, report: str) -> m.VersionList:
        return self._call("listVersions", {"idOrSlug": report})

    @operation("rollbackReport")
    def rollback(self, report: str, version: int, *, idempotency_key: Optional[str] = None) -> m.Report:
        return self._call("rollbackReport", {"idOrSlug": report}, body=_body(m.RollbackRequest, version=version), idempotency_key=idempotency_key)

    @operation("archiveReport")
    def archive(self, report: str, archived: bool = True, *, idempotency_key: Optional[str] = None) -> m.Report:
        """Archive the report, or restore it with archived=False."""
        return self._call("archiveReport", {"idOrSlug": report}, body=_body(m.ArchiveRequest, archived=archived), idempotency_key=idempotency_key)

    @operation("copyReport")
    def copy(self, report_or_template: str, *, title: Optional[str] = None, slug: Optional[str] = None,
             idempotency_key: Optional[str] = None) -> m.Report:
        """A copy of a report's live version, or of a template (by its id)."""
        return self._call("copyReport", {"idOrSlug": report_or_template}, body=_body(m.CopyRequest, title=title, slug=slug),
                          idempotency_key=idempotency_key)

    @operation("listTemplates")
    def templates(self) -> m.TemplateList:
        return self._call("listTemplates")

    @operation("shareReport")
    def share(self, report: str, audience: Sequence[str], *, idempotency_key: Optional[str] = None) -> m.Sharing:
        return self._call("shareReport", {"idOrSlug": report}, body=_body(m.AudienceRequest, audience=list(audience)), idempotency_key=idempotency_key)

    @operation("unshareReport")
    def unshare(self, report: str, audience: Sequence[str]) -> m.Sharing:
        return self._call("unshareReport", {"idOrSlug": report}, body=_body(m.AudienceRequest, audience=list(audience)))

    @operation("sendReport")
    def send(self, report: str, to: Sequence[str], *, note: Optional[str] = None, idempotency_key: Optional[str] = None) -> m.Sent:
        return self._call("sendReport", {"idOrSlug": report}, body=_body(m.SendRequest, to=list(to), note=note), idempotency_key=idempotency_key)

    @operation("getReportAnalytics")
    def analytics(self, report: str) -> m.ReportAnalytics:
        return self._call("getReportAnalytics", {"idOrSlug": report})

    @operation("getOrganizationAnalytics")
    def organization_analytics(self, *, limit: Optional[int] = None) -> Iterator[m.ReportReach]:
        return self._pages("getOrganizationAnalytics", None, None, limit)

    @operation("getReportEvidence")
    def evidence(self, report: str, *, format: str = "json") -> Union[m.Evidence, bytes]:
        return self._call("getReportEvidence", {"idOrSlug": report}, {"format": format})

    @operation("listDatasets")
    def datasets(self, report: str) -> m.DatasetList:
        return self._call("listDatasets", {"idOrSlug": report})

    @operation("putDataset")
    def put_dataset(self, report: str, name: str, data: Any) -> m.Dataset:
        """Store data (any JSON) as the report's dataset name, read at _data/<name>."""
        return self._call("putDataset", {"idOrSlug": report, "name": name}, body=data)

    @operation("getDataset")
    def get_dataset(self, report: str, name: str) -> Any:
        return self._call("getDataset", {"idOrSlug": report, "name": name})

    @operation("deleteDataset")
    def delete_dataset(self, report: str, name: str) -> None:
        self._call("deleteDataset", {"idOrSlug": report, "name": name})


class Audiences(_Resource):
    @operation("resolveAudience")
    def resolve(self, audience: Sequence[str], *, idempotency_key: Optional[str] = None) -> m.ResolvedAudience:
        """What each phrase of an audience means (people, teams, public), or
        an error with candidates."""
        return self._call("resolveAudience", body=_body(m.AudienceRequest, audience=list(audience)), idempotency_key=idempotency_key)


class Schedules(_Resource):
    """Schedules that fire schedule.due for living reports."""

    @operation("createSchedule")
    def create(self, report_id: str, *, idempotency_key: Optional[str] = None, **fields: Any) -> m.Schedule:
        """fields: cron or every, timezone, note."""
        return self._call("createSchedule", body=_body(m.ScheduleCreate, report_id=report_id, **fields), idempotency_key=idempotency_key)

    @operation("getSchedule")
    def get(self, id: str) -> m.Schedule:
        return self._call("getSchedule", {"id": id})

    @operation("listSchedules")
    def list(self, *, report_id: Optional[str] = None, limit: Optional[int] = None) -> Iterator[m.Schedule]:
        return self._pages("listSchedules", None, {"reportId": report_id}, limit)

    @operation("deleteSchedule")
    def delete(self, id: str) -> None:
        self._call("deleteSchedule", {"id": id})

    @operation("pauseSchedule")
    def pause(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Schedule:
        return self._call("pauseSchedule", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("resumeSchedule")
    def resume(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Schedule:
        return self._call("resumeSchedule", {"id": id}, body={}, idempotency_key=idempotency_key)


class Inbox(_Resource):
    """What waits on the person a member token acts for."""

    @operation("inbox")
    def list(self, kind: Optional[str] = None, *, order: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Any]:
        """What waits on the caller. Without kind, every kind, newest first
        (at most limit, one page), as InboxItems: kind, and the request under
        the field of that name. With kind approval, collection or review,
        that kind's list of Approvals, Collections or Reviews. order
        "attention" lists the highest risk first, then the soonest due;
        "newest" the newest first."""
        models: Dict[Optional[str], Any] = {None: m.InboxItem, "approval": m.Approval, "collection": m.Collection, "review": m.Review}
        if kind not in models:
            raise ValueError("kind is approval, collection, review or None, not %r" % (kind,))
        model = models[kind]
        q: Dict[str, Any] = {"kind": kind, "order": order, "limit": limit}
        while True:
            page = self._call("inbox", None, q)
            for item in page.get("data") or []:
                yield model.from_dict(item)
            if not page.get("nextCursor"):
                return
            q["cursor"] = page["nextCursor"]


class Me(_Resource):
    """The caller: its key, organisation and person."""

    @operation("getMe")
    def get(self) -> m.Me:
        return self._call("getMe")

    @operation("createOwnToken")
    def create_token(self, scopes: Optional[Sequence[str]] = None, *, idempotency_key: Optional[str] = None) -> m.MemberToken:
        """A person mints a token of their own (member token)."""
        body = _body(m.MemberTokenCreate, scopes=list(scopes) if scopes is not None else None)
        return self._call("createOwnToken", body=body, idempotency_key=idempotency_key)

    @operation("listOwnTokens")
    def list_tokens(self, *, limit: Optional[int] = None) -> Iterator[m.Key]:
        """The person's own member tokens, revoked ones included, newest first (member token)."""
        return self._pages("listOwnTokens", None, None, limit)

    @operation("revokeOwnToken")
    def revoke_token(self, id: str) -> m.Key:
        """Revokes one of the person's own tokens; anyone else's is not found (member token)."""
        return self._call("revokeOwnToken", {"id": id})

    @operation("getMyDelegation")
    def get_delegation(self) -> m.MyDelegation:
        """The person's delegation while away (None when none) and those that name them (member token)."""
        return self._call("getMyDelegation")

    @operation("setMyDelegation")
    def set_delegation(self, to: str, until: Union[str, _dt.datetime], *, from_: Union[str, _dt.datetime, None] = None,
                       note: Optional[str] = None) -> m.MyDelegation:
        """Who stands in for the person from from_ (now when left out) until until; replaces any delegation."""
        body = _body(m.DelegationSet, to=to, until=_time(until), from_=_time(from_), note=note)
        return self._call("setMyDelegation", body=body)

    @operation("endMyDelegation")
    def end_delegation(self) -> None:
        """Ends the person's delegation at once; ending none is no error."""
        self._call("endMyDelegation")


class Service(_Resource):
    """Health, the contract and the published keys; no key needed."""

    @operation("healthz")
    def health(self) -> Any:
        return self._t.request("healthz", auth=False)[1]

    @operation("readyz")
    def readiness(self) -> m.Readiness:
        return self._t.request("readyz", auth=False)[1]

    @operation("getOpenAPI")
    def openapi(self) -> Dict[str, Any]:
        return self._t.request("getOpenAPI", auth=False)[1]

    @operation("getDecisionKeys")
    def decision_keys(self) -> m.SigningKeySet:
        """The JSON Web Key set decision tokens are signed with."""
        return self._t.request("getDecisionKeys", auth=False)[1]

    @operation("getEvidenceKeys")
    def evidence_keys(self) -> m.SigningKeySet:
        return self._t.request("getEvidenceKeys", auth=False)[1]

    @operation("getMCPResourceMetadata")
    def mcp_resource_metadata(self) -> m.ProtectedResourceMetadata:
        """How the MCP endpoint (/mcp) authenticates (RFC 9728)."""
        return self._t.request("getMCPResourceMetadata", auth=False)[1]

    @operation("getResourceMetadata")
    def resource_metadata(self) -> m.ProtectedResourceMetadata:
        return self._t.request("getResourceMetadata", auth=False)[1]


# The admin API (admin keys).

class _AdminOrganization(_Resource):
    @operation("getOrganization")
    def get(self) -> m.Organization:
        return self._call("getOrganization")

    @operation("updateOrganization")
    def update(self, **fields: Any) -> m.Organization:
        return self._call("updateOrganization", body=_body(m.OrganizationPatch, **fields))


class _AdminMembers(_Resource):
    @operation("createMember")
    def create(self, email: str, *, name: Optional[str] = None, role: Optional[str] = None, idempotency_key: Optional[str] = None) -> m.Member:
        return self._call("createMember", body=_body(m.MemberCreate, email=email, name=name, role=role), idempotency_key=idempotency_key)

    @operation("listMembers")
    def list(self, *, limit: Optional[int] = None) -> Iterator[m.Member]:
        return self._pages("listMembers", None, None, limit)

    @operation("updateMember")
    def update(self, id: str, **fields: Any) -> m.Member:
        return self._call("updateMember", {"id": id}, body=_body(m.MemberPatch, **fields))

    @operation("createMemberToken")
    def create_token(self, id: str, scopes: Optional[Sequence[str]] = None, *, idempotency_key: Optional[str] = None) -> m.MemberToken:
        body = _body(m.MemberTokenCreate, scopes=list(scopes) if scopes is not None else None)
        return self._call("createMemberToken", {"id": id}, body=body, idempotency_key=idempotency_key)


class _AdminTeams(_Resource):
    @operation("createTeam")
    def create(self, name: str, kind: str = "team", *, members: Optional[Sequence[str]] = None, idempotency_key: Optional[str] = None) -> m.Team:
        body = _body(m.TeamCreate, name=name, kind=kind, members=list(members) if members is not None else None)
        return self._call("createTeam", body=body, idempotency_key=idempotency_key)

    @operation("listTeams")
    def list(self, *, limit: Optional[int] = None) -> Iterator[m.Team]:
        return self._pages("listTeams", None, None, limit)

    @operation("updateTeam")
    def update(self, id: str, **fields: Any) -> m.Team:
        return self._call("updateTeam", {"id": id}, body=_body(m.TeamPatch, **fields))

    @operation("deleteTeam")
    def delete(self, id: str) -> None:
        self._call("deleteTeam", {"id": id})


class _AdminGuests(_Resource):
    @operation("createGuest")
    def create(self, email: str, *, name: Optional[str] = None, idempotency_key: Optional[str] = None) -> m.Guest:
        return self._call("createGuest", body=_body(m.GuestCreate, email=email, name=name), idempotency_key=idempotency_key)

    @operation("listGuests")
    def list(self, *, limit: Optional[int] = None) -> Iterator[m.Guest]:
        return self._pages("listGuests", None, None, limit)

    @operation("updateGuest")
    def update(self, id: str, **fields: Any) -> m.Guest:
        return self._call("updateGuest", {"id": id}, body=_body(m.GuestPatch, **fields))

    @operation("removeGuest")
    def remove(self, id: str) -> None:
        self._call("removeGuest", {"id": id})


class _AdminKeys(_Resource):
    @operation("createKey")
    def create(self, name: str, kind: str, *, scopes: Optional[Sequence[str]] = None, idempotency_key: Optional[str] = None) -> m.CreatedKey:
        """An agent or admin key; its secret is in this answer only."""
        body = _body(m.KeyCreate, name=name, kind=kind, scopes=list(scopes) if scopes is not None else None)
        return self._call("createKey", body=body, idempotency_key=idempotency_key)

    @operation("listKeys")
    def list(self, *, limit: Optional[int] = None) -> Iterator[m.Key]:
        return self._pages("listKeys", None, None, limit)

    @operation("revokeKey")
    def revoke(self, id: str) -> m.Key:
        return self._call("revokeKey", {"id": id})


class _AdminRules(_Resource):
    @operation("createRule")
    def create(self, name: str, kind: str, *, idempotency_key: Optional[str] = None, **fields: Any) -> m.Rule:
        return self._call("createRule", body=_body(m.RuleCreate, name=name, kind=kind, **fields), idempotency_key=idempotency_key)

    @operation("listRules")
    def list(self, *, limit: Optional[int] = None) -> Iterator[m.Rule]:
        return self._pages("listRules", None, None, limit)

    @operation("updateRule")
    def update(self, id: str, **fields: Any) -> m.Rule:
        return self._call("updateRule", {"id": id}, body=_body(m.RulePatch, **fields))

    @operation("deleteRule")
    def delete(self, id: str) -> None:
        self._call("deleteRule", {"id": id})


class _AdminWebhooks(_Resource):
    @operation("createWebhook")
    def create(self, url: str, *, events: Optional[Sequence[str]] = None, format: Optional[str] = None,
               idempotency_key: Optional[str] = None) -> m.WebhookEndpoint:
        """An endpoint; its signing secret is in this answer only."""
        body = _body(m.WebhookSettings, url=url, events=list(events) if events is not None else None, format=format)
        return self._call("createWebhook", body=body, idempotency_key=idempotency_key)

    @operation("listWebhooks")
    def list(self, *, limit: Optional[int] = None) -> Iterator[m.WebhookEndpoint]:
        return self._pages("listWebhooks", None, None, limit)

    @operation("getWebhook")
    def get(self, id: str) -> m.WebhookEndpoint:
        return self._call("getWebhook", {"id": id})

    @operation("updateWebhook")
    def update(self, id: str, **fields: Any) -> m.WebhookEndpoint:
        return self._call("updateWebhook", {"id": id}, body=_body(m.WebhookSettings, **fields))

    @operation("deleteWebhook")
    def delete(self, id: str) -> None:
        self._call("deleteWebhook", {"id": id})

    @operation("rotateWebhookSecret")
    def rotate_secret(self, id: str, *, idempotency_key: Optional[str] = None) -> m.WebhookEndpoint:
        return self._call("rotateWebhookSecret", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("testWebhook")
    def test(self, id: str, *, idempotency_key: Optional[str] = None) -> m.TestResult:
        return self._call("testWebhook", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("listDeliveries")
    def deliveries(self, id: str, *, status: Optional[str] = None, limit: Optional[int] = None) -> Iterator[m.Delivery]:
        return self._pages("listDeliveries", {"id": id}, {"status": status}, limit)

    @operation("recoverDeliveries")
    def recover(self, id: str, since: Union[str, _dt.datetime], *, idempotency_key: Optional[str] = None) -> m.RecoverResult:
        return self._call("recoverDeliveries", {"id": id}, body=_body(m.RecoverRequest, since=_time(since)), idempotency_key=idempotency_key)


class _AdminDeliveries(_Resource):
    @operation("getDelivery")
    def get(self, id: str) -> m.Delivery:
        return self._call("getDelivery", {"id": id})

    @operation("resendDelivery")
    def resend(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Delivery:
        return self._call("resendDelivery", {"id": id}, body={}, idempotency_key=idempotency_key)


class _AdminActions(_Resource):
    @operation("createAction")
    def create(self, name: str, input_schema: Mapping[str, Any], *, idempotency_key: Optional[str] = None, **fields: Any) -> m.Action:
        """Register an action for the gate. fields: description,
        editable_fields, policy, decision_token_ttl_seconds."""
        body = _body(m.ActionInput, name=name, input_schema=dict(input_schema), **fields)
        return self._call("createAction", body=body, idempotency_key=idempotency_key)

    @operation("listActions")
    def list(self, *, limit: Optional[int] = None) -> Iterator[m.Action]:
        return self._pages("listActions", None, None, limit)

    @operation("getAction")
    def get(self, id: str) -> m.Action:
        return self._call("getAction", {"id": id})

    @operation("updateAction")
    def update(self, id: str, name: str, input_schema: Mapping[str, Any], **fields: Any) -> m.Action:
        """Replace the whole definition."""
        return self._call("updateAction", {"id": id}, body=_body(m.ActionInput, name=name, input_schema=dict(input_schema), **fields))

    @operation("deleteAction")
    def delete(self, id: str) -> None:
        self._call("deleteAction", {"id": id})


class _AdminSlack(_Resource):
    @operation("getSlackIntegration")
    def get(self) -> m.SlackIntegration:
        return self._call("getSlackIntegration")

    @operation("putSlackIntegration")
    def put(self, **fields: Any) -> m.SlackIntegration:
        """fields: signing_secret, bot_token, channel."""
        return self._call("putSlackIntegration", body=_body(m.SlackSettings, **fields))

    @operation("deleteSlackIntegration")
    def delete(self) -> None:
        self._call("deleteSlackIntegration")

    @operation("getSlackManifest")
    def manifest(self) -> m.SlackManifest:
        return self._call("getSlackManifest")


class _AdminModelScreen(_Resource):
    @operation("getModelScreen")
    def get(self) -> m.ModelScreen:
        return self._call("getModelScreen")

    @operation("putModelScreen")
    def put(self, url: str, model: str, **fields: Any) -> m.ModelScreen:
        """fields: api_key (write-only; left out keeps the stored one)."""
        settings = m.ModelScreenSettings(url=url, model=model, **{k: v for k, v in fields.items() if v is not None})
        return self._call("putModelScreen", body=settings.to_dict())

    @operation("deleteModelScreen")
    def delete(self) -> None:
        self._call("deleteModelScreen")


class _AdminHeldVersions(_Resource):
    @operation("listHeldVersions")
    def list(self) -> m.HeldVersionList:
        return self._call("listHeldVersions")

    @operation("releaseHeldVersion")
    def release(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Report:
        return self._call("releaseHeldVersion", {"id": id}, body={}, idempotency_key=idempotency_key)

    @operation("declineHeldVersion")
    def decline(self, id: str, *, idempotency_key: Optional[str] = None) -> m.Report:
        return self._call("declineHeldVersion", {"id": id}, body={}, idempotency_key=idempotency_key)


class Admin:
    """The organisation's administration (admin keys)."""

    def __init__(self, client: "Client"):
        self.organization = _AdminOrganization(client)
        self.members = _AdminMembers(client)
        self.teams = _AdminTeams(client)
        self.guests = _AdminGuests(client)
        self.keys = _AdminKeys(client)
        self.rules = _AdminRules(client)
        self.webhooks = _AdminWebhooks(client)
        self.deliveries = _AdminDeliveries(client)
        self.actions = _AdminActions(client)
        self.slack = _AdminSlack(client)
        self.model_screen = _AdminModelScreen(client)
        self.held_versions = _AdminHeldVersions(client)


# Operations the SDK leaves out on purpose, with why.
NOT_SURFACED = {
    "slackInteractions": "Slack calls it with Slack's signature; no Assent client does",
    "metrics": "Prometheus scrapes it; it is a process's metrics, not the API's",
}


class Client:
    """An Assent client.

    base_url and api_key default to ASSENT_BASE_URL and ASSENT_API_KEY. The
    key is an agent key, a member token (a person's: deciding, replying,
    the inbox) or an admin key (client.admin). timeout is per HTTP request
    (long-polls add their wait to it); max_retries bounds the retries of
    network errors, 5xx, 429 and 409 idempotency_in_progress. issuer is
    the instance's public base URL (its ASSENT_BASE_URL, which decision
    tokens name), when the client reaches it at another address.
    """

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, *, timeout: float = 30.0,
                 max_retries: int = 4, backoff: float = 0.5, max_backoff: float = 8.0, user_agent: Optional[str] = None,
                 issuer: Optional[str] = None):
        self._transport = Transport(base_url, api_key, timeout, max_retries, backoff, max_backoff, user_agent)
        self.issuer = (issuer or self._transport.base_url).rstrip("/")
        self.approvals = Approvals(self)
        self.collections = Collections(self)
        self.reviews = Reviews(self)
        self.comments = Comments(self)
        self.gate = Gate(self)
        self.receipts = Receipts(self)
        self.mandates = Mandates(self)
        self.flows = Flows(self)
        self.reports = Reports(self)
        self.audiences = Audiences(self)
        self.schedules = Schedules(self)
        self.inbox = Inbox(self)
        self.me = Me(self)
        self.service = Service(self)
        self.admin = Admin(self)
        self._jwks: Optional[Dict[str, Any]] = None
        self._jwks_at = 0.0
        self._organization: Optional[str] = None
        self._expiries: "collections.OrderedDict[str, Optional[str]]" = collections.OrderedDict()

    def _expiry_for(self, idempotency_key: Optional[str], expires_in: Optional[Duration],
                    expires_at: Union[str, _dt.datetime, None]) -> Optional[str]:
        """expiresAt for a create. A repeat with the caller's key sends the
        expiry computed the first time, so the body is the same and the
        server answers the first response instead of idempotency_key_reused.
        (A retry from another process should pass expires_at itself.)"""
        if expires_at is not None or idempotency_key is None:
            return _expiry(expires_in, expires_at)
        if idempotency_key not in self._expiries:
            self._expiries[idempotency_key] = _expiry(expires_in, None)
            while len(self._expiries) > 1000:
                self._expiries.popitem(last=False)
        return self._expiries[idempotency_key]

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    def request(self, operation_id: str, path_params: Optional[Mapping[str, Any]] = None, query: Optional[Mapping[str, Any]] = None,
                body: Any = None, **kw: Any) -> Any:
        """Call any operation by its operationId (the generic function every
        method uses): path_params and query by their names in the document."""
        return self._transport.request(operation_id, path_params, query, body, **kw)[1]

    def verify_decision_token(self, token: str, input: Any, *, action: Optional[str] = None,
                              issuer: Optional[str] = None) -> DecisionClaims:
        """verify_decision_token against this instance: its key set (kept 5
        minutes, fetched again for an unknown key), the caller's
        organisation, and issuer (default the client's issuer)."""
        if self._organization is None:
            self._organization = self.me.get().organization.id
        keys = self._keys(refresh=False)
        kwargs = dict(issuer=issuer or self.issuer, organization=self._organization, action=action)
        try:
            return verify_decision_token(token, input, jwks=keys, **kwargs)  # type: ignore[arg-type]
        except Exception as e:
            if getattr(e, "reason", None) != "unknown_key":
                raise
            return verify_decision_token(token, input, jwks=self._keys(refresh=True), **kwargs)  # type: ignore[arg-type]

    def _keys(self, refresh: bool) -> Dict[str, Any]:
        if refresh or self._jwks is None or time.monotonic() - self._jwks_at > 300:
            self._jwks = self.service.decision_keys().raw  # type: ignore[attr-defined]
            self._jwks_at = time.monotonic()
        return self._jwks  # type: ignore[return-value]

    def __repr__(self) -> str:
        return "assent.Client(%r)" % self.base_url
