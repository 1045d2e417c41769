// Package validate checks request structs against their `validate` tags and
// turns the first failure into an apperr naming the JSON field.
package validate

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/go-playground/validator/v10"
	"github.com/go-playground/validator/v10/non-standard/validators"

	"github.com/assent-hq/assent/internal/apperr"
)

var (
	once sync.Once
	v    *validator.Validate
)

// Engine is the shared validator, reporting fields by their JSON names.
func Engine() *validator.Validate {
	once.Do(func() {
		v = validator.New(validator.WithRequiredStructEnabled())
		v.RegisterTagNameFunc(func(f reflect.StructField) string {
			if f.Anonymous {
				return embedded
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				return ""
			}
			return name
		})
		// notblank: a string of spaces is as missing as an empty one.
		if err := v.RegisterValidation("notblank", validators.NotBlank); err != nil {
			panic(err)
		}
	})
	return v
}

// Struct validates s; the error, if any, is a 400 invalid_request.
func Struct(s any) error {
	err := Engine().Struct(s)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) || len(verrs) == 0 {
		return apperr.New(apperr.InvalidRequest, "%v", err)
	}
	fe := verrs[0]
	field := fieldPath(fe.Namespace())
	return apperr.Field(apperr.InvalidRequest, field, "%s", message(field, fe))
}

// embedded names an embedded struct in a validator namespace: its fields
// are the outer struct's on the wire, as encoding/json reads them.
const embedded = "~"

// fieldPath drops the struct name that leads a validator namespace, and
// the embedded structs' names.
func fieldPath(ns string) string {
	if _, rest, ok := strings.Cut(ns, "."); ok {
		ns = rest
	}
	return strings.ReplaceAll(ns, embedded+".", "")
}

func message(field string, fe validator.FieldError) string {
	switch fe.Tag() {
	case "required", "notblank":
		return field + " is required"
	case "email":
		return field + " must be an email address"
	case "oneof":
		return fmt.Sprintf("%s must be one of: %s", field, strings.ReplaceAll(fe.Param(), " ", ", "))
	case "max":
		if fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map {
			return fmt.Sprintf("%s may have at most %s", field, entries(fe.Param()))
		}
		if fe.Kind() == reflect.String {
			return fmt.Sprintf("%s must be at most %s characters", field, fe.Param())
		}
		return fmt.Sprintf("%s must be at most %s", field, fe.Param())
	case "min":
		if fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map {
			return fmt.Sprintf("%s must have at least %s", field, entries(fe.Param()))
		}
		if fe.Kind() == reflect.String {
			return fmt.Sprintf("%s must be at least %s characters", field, fe.Param())
		}
		return fmt.Sprintf("%s must be at least %s", field, fe.Param())
	case "url", "http_url":
		return field + " must be a valid URL"
	case "gt", "gte":
		return fmt.Sprintf("%s must be at least %s", field, fe.Param())
	}
	return fmt.Sprintf("%s is invalid (%s)", field, fe.Tag())
}

// entries counts n entries in words: "1 entry", "3 entries".
func entries(n string) string {
	if n == "1" {
		return "1 entry"
	}
	return n + " entries"
}
