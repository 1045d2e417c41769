package comments

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reviews"
)

// BriefInput names the threads a brief composes; none means every open
// thread of the report.
type BriefInput struct {
	ThreadIDs []string `json:"threadIds" validate:"max=200,dive,required,max=40" nullable:"true"`
}

// Brief is one prompt for producing a report's next version.
type Brief struct {
	ReportID       string   `json:"reportId"`
	BasedOnVersion int      `json:"basedOnVersion"`
	Threads        []string `json:"threads"`
	Text           string   `json:"text"`
}

// RevisionBrief composes threads into a brief (the layout is in
// docs/decisions.md, "Revision briefs"). The same threads in the same
// state give the same text: threads in the order they were opened,
// comments in the order written, reviews by id.
func (s *Service) RevisionBrief(ctx context.Context, c models.Actor, idOrSlug string, in *BriefInput) (*Brief, error) {
	if err := validate.Struct(in); err != nil {
		return nil, err
	}
	r, threads, err := s.Threads(ctx, c, idOrSlug)
	if err != nil {
		return nil, err
	}
	if r.LiveVersion == nil {
		return nil, apperr.New(apperr.InvalidState, "report %s has no live version to revise", r.Slug)
	}
	chosen, err := pick(threads, in.ThreadIDs)
	if err != nil {
		return nil, err
	}
	revs, err := s.reviewsOf(ctx, r, chosen)
	if err != nil {
		return nil, err
	}
	b := &Brief{ReportID: r.ID, BasedOnVersion: *r.LiveVersion, Threads: []string{}}
	for _, t := range chosen {
		b.Threads = append(b.Threads, t.ID)
	}
	b.Text = compose(r, chosen, revs)
	return b, nil
}

// pick is the open threads, or those named (whatever their state), in the
// order they were opened.
func pick(threads []models.CommentThread, named []string) ([]models.CommentThread, error) {
	if len(named) == 0 {
		return slices.DeleteFunc(threads, func(t models.CommentThread) bool { return t.Status != models.ThreadOpen }), nil
	}
	for i, id := range named {
		if !slices.ContainsFunc(threads, func(t models.CommentThread) bool { return t.ID == id }) {
			return nil, apperr.Field(apperr.NotFound, fmt.Sprintf("threadIds[%d]", i), "thread %s is not on this report", id)
		}
	}
	return slices.DeleteFunc(threads, func(t models.CommentThread) bool { return !slices.Contains(named, t.ID) }), nil
}

// reviewsOf are the reviews whose verdict notes a brief carries: those the
// threads belong to, and those of the live version, by id.
func (s *Service) reviewsOf(ctx context.Context, r *models.Report, threads []models.CommentThread) ([]reviews.Review, error) {
	all, err := reviews.Records(s.Store).AboutReport(ctx, r.OrganizationID, r.ID)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(all, func(rv reviews.Review) bool {
		return rv.Version != *r.LiveVersion && !slices.ContainsFunc(threads, func(t models.CommentThread) bool {
			return t.ReviewID != nil && *t.ReviewID == rv.ID
		})
	})
	return out, nil
}

// compose writes the brief's text.
func compose(r *models.Report, threads []models.CommentThread, revs []reviews.Review) string {
	var b strings.Builder
	live := *r.LiveVersion
	fmt.Fprintf(&b, "Revision brief for %q (%s), based on version %d.\n", r.Title, r.Slug, live)
	follow := "threads follow"
	if len(threads) == 1 {
		follow = "thread follows"
	}
	fmt.Fprintf(&b, "%d comment %s. Revise the report so that each is addressed; keep what no thread mentions.\n", len(threads), follow)
	for i, t := range threads {
		fmt.Fprintf(&b, "\nThread %d of %d (%s): %s\n", i+1, len(threads), t.ID, where(&t, live))
		if t.Quote != nil {
			fmt.Fprintf(&b, "Passage: %q\n", *t.Quote)
			fmt.Fprintf(&b, "In context: %q\n", t.Context)
		}
		if t.ReviewID != nil {
			fmt.Fprintf(&b, "Raised in review %s.\n", *t.ReviewID)
		}
		if t.Status == models.ThreadResolved {
			fmt.Fprintf(&b, "Resolved by %s: %s\n", deref(t.ResolvedByName), oneLine(deref(t.ResolutionNote)))
		}
		b.WriteString("Comments:\n")
		for _, c := range t.Comments {
			fmt.Fprintf(&b, "- %s (%s), %s: %s\n", c.AuthorName, c.AuthorKind, wiretime.New(c.CreatedAt), indent(c.Body))
			if n := len(c.Images); n > 0 {
				fmt.Fprintf(&b, "  (%d image%s attached)\n", n, plural(n))
			}
		}
	}
	var notes []string
	for _, rv := range revs {
		for _, v := range rv.Verdicts.V {
			if v.Note != "" {
				notes = append(notes, fmt.Sprintf("- Review %s of version %d (%q), %s by %s: %s", rv.ID, rv.Version, rv.Title,
					strings.ReplaceAll(v.Verdict, "_", " "), v.ReviewerName, indent(v.Note)))
			}
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nReview verdict notes:\n")
		b.WriteString(strings.Join(notes, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}

// where says which version a thread is about.
func where(t *models.CommentThread, live int) string {
	switch {
	case t.Quote == nil:
		return fmt.Sprintf("about the whole report, opened on version %d", t.MadeOnVersion)
	case t.ReviewID != nil:
		return fmt.Sprintf("on version %d, the version under review", t.MadeOnVersion)
	case t.AnchorState == models.AnchorOutdated:
		return fmt.Sprintf("outdated: the passage was last found in version %d and is not in version %d", t.AnchorVersion, live)
	}
	return fmt.Sprintf("on version %d, opened on version %d", t.AnchorVersion, t.MadeOnVersion)
}

// indent keeps a multi-line body inside its list item.
func indent(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ") }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
