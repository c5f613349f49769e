package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/api"
)

// TestRoutesNameTheirHandlers keeps routes.go a map a reader can grep: every
// s.handle line names a method of *Server (no closure factories, no inline
// funcs), and that method is declared in this package.
func TestRoutesNameTheirHandlers(t *testing.T) {
	fset := token.NewFileSet()
	methods := map[string]bool{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var routes *ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if name == "routes.go" {
			routes = f
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) == 1 {
				if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && id.Name == "Server" {
						methods[fn.Name.Name] = true
					}
				}
			}
		}
	}
	if routes == nil {
		t.Fatal("routes.go not found")
	}
	n := 0
	ast.Inspect(routes, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		fun, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || fun.Sel.Name != "handle" || len(call.Args) != 3 {
			return true
		}
		n++
		pattern := "?"
		if lit, ok := call.Args[0].(*ast.BasicLit); ok {
			pattern, _ = strconv.Unquote(lit.Value)
		}
		h, ok := call.Args[2].(*ast.SelectorExpr)
		if !ok {
			t.Errorf("%s: %s: the handler is not a named method (got %T)", fset.Position(call.Pos()), pattern, call.Args[2])
			return true
		}
		if recv, ok := h.X.(*ast.Ident); !ok || recv.Name != "s" {
			t.Errorf("%s: %s: the handler is not a method of the server", fset.Position(call.Pos()), pattern)
		}
		if !strings.HasPrefix(h.Sel.Name, "handle") {
			t.Errorf("%s: %s: handler %s is not named handleX", fset.Position(call.Pos()), pattern, h.Sel.Name)
		}
		if !methods[h.Sel.Name] {
			t.Errorf("%s: %s: no method (*Server).%s in package api", fset.Position(call.Pos()), pattern, h.Sel.Name)
		}
		return true
	})
	// Every registered route must come from routes.go, so the count of
	// s.handle lines there is the count of routes the server serves.
	if want := len(api.NewServer(api.DefaultConfig(), api.Deps{}).Routes()); n != want {
		t.Errorf("routes.go has %d s.handle lines; the server registers %d routes", n, want)
	}
}
