package reports

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// Actions are the path segments that follow a report's slug in the API
// (/api/v1/reports/{slug}/versions): no slug segment may be one, so an
// unencoded slug with slashes still reads one way only.
var Actions = []string{"versions", "rollback", "archive", "copy", "evidence", "share", "send", "data",
	"comments", "revision-briefs", "analytics"}

// segment is one part of a slug: lowercase letters and digits, words
// joined by single hyphens.
var segment = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// CheckSlug refuses a slug that is not lowercase a-z, 0-9 and - segments
// joined by /, at most 200 characters, or that uses an action's name as a
// segment.
func CheckSlug(slug string) error {
	if slug == "" || len(slug) > models.MaxSlug {
		return apperr.Field(apperr.InvalidRequest, "slug", "slug must be 1 to %d characters", models.MaxSlug)
	}
	for _, seg := range strings.Split(slug, "/") {
		if !segment.MatchString(seg) {
			return apperr.Field(apperr.InvalidRequest, "slug",
				"slug must be lowercase letters, digits and single hyphens, in segments joined by /, such as team/q3-report; %q is not", seg)
		}
		if slices.Contains(Actions, seg) {
			return apperr.Field(apperr.InvalidRequest, "slug", "%q cannot be a slug segment: the API uses it after slugs (%s)", seg, strings.Join(Actions, ", "))
		}
	}
	return nil
}

// latin spells the letters NFKD does not split into an ASCII letter and an
// accent.
var latin = strings.NewReplacer("ß", "ss", "æ", "ae", "œ", "oe", "ø", "o", "đ", "d", "ł", "l", "þ", "th")

// DeriveSlug makes a slug from a title: accents dropped, anything but
// letters and digits a hyphen ("Q3 Café Report!" → "q3-cafe-report").
func DeriveSlug(title string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFKD.String(latin.Replace(strings.ToLower(title))) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue // a combining accent, split off by NFKD
		case r >= unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			continue // a letter with no ASCII form is left out, not a word break
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			hyphen = false
		default:
			hyphen = true
		}
	}
	slug := b.String()
	if len(slug) > models.MaxSlug-4 { // room for a numbered suffix
		slug = strings.TrimRight(slug[:models.MaxSlug-4], "-")
	}
	if slug == "" || slices.Contains(Actions, slug) {
		slug = strings.TrimPrefix(slug+"-report", "-")
	}
	return slug
}

// setSlug gives a new report the slug asked for, checked, or else one
// derived from its title (which a taken slug then numbers).
func setSlug(nr *models.NewReport, given *string) error {
	if given == nil {
		nr.Slug = DeriveSlug(nr.Title)
		return nil
	}
	if err := CheckSlug(*given); err != nil {
		return err
	}
	nr.Slug, nr.SlugGiven = *given, true
	return nil
}
