package assent_test

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestReadmeExample runs the README's first Go block as a program against
// assent dev, with a demo administrator approving what it asks.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```go\n")
	code, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no Go block in README.md")
	}
	d := startDev(t)
	dir := t.TempDir()
	abs, _ := filepath.Abs(".")
	gomod := "module readme\n\ngo 1.24\n\nrequire github.com/assent-hq/assent/sdk/go v0.0.0\n\nreplace github.com/assent-hq/assent/sdk/go => " + abs + "\n"
	sum, _ := os.ReadFile("go.sum")
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(code)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	decided := decideWhenAsked(t, person(t, "admin"), map[string]any{"amount": 120, "orderId": "1042"}, "approve", map[string]any{"amount": 100})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ASSENT_BASE_URL="+d.BaseURL, "ASSENT_API_KEY="+d.AgentKey, "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	<-decided
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "approved map[amount:100 orderId:1042]") {
		t.Fatalf("the example printed:\n%s", out)
	}
}

// helpers lists the package's hand-written exported functions and methods
// (generated.go's are one per operation), each with its signature.
func helpers(t *testing.T) []string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go") && fi.Name() != "generated.go"
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range pkgs["assent"].Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			var sig bytes.Buffer
			_ = printer.Fprint(&sig, fset, fd.Type)
			name := "assent." + fd.Name.Name
			if fd.Recv != nil {
				recv := fd.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if idx, ok := recv.(*ast.IndexExpr); ok {
					recv = idx.X
				}
				typ := recv.(*ast.Ident).Name
				switch {
				case typ == "Client":
					name = "c." + fd.Name.Name
				case strings.HasSuffix(typ, "Service"):
					name = "c." + strings.TrimSuffix(typ, "Service") + "." + fd.Name.Name
				default:
					continue // an error type's Error, Unwrap, Is
				}
			}
			out = append(out, name+strings.TrimPrefix(sig.String(), "func"))
		}
	}
	sort.Strings(out)
	return out
}

// TestReadmeListsEveryHelper: the README's "## Every helper" block is
// every hand-written function and method with its signature.
func TestReadmeListsEveryHelper(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?ms)^## Every helper\n.*?```text\n(.*?)```").FindSubmatch(readme)
	want := strings.Join(helpers(t), "\n") + "\n"
	if m == nil || string(m[1]) != want {
		t.Fatalf("README.md's \"## Every helper\" block should read:\n%s", want)
	}
}
