package inspect_test

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/inspect"
)

// The inspector is an http.Handler: mount it under a prefix of your server, behind your
// own authentication (here HTTP basic authentication).
func ExampleNew() {
	store := fsmrt.NewMemoryStore() // your SQLite or PostgreSQL store
	h, err := inspect.New(store, build.NewTask(nil).Describe())
	if err != nil {
		panic(err)
	}
	requireOperator := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, pass, ok := r.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(user+":"+pass), []byte("ops:secret")) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="inspector"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/inspect/", requireOperator(http.StripPrefix("/inspect", h)))

	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, _ := http.Get(srv.URL + "/inspect/machine?m=build.Task")
	resp.Body.Close()
	fmt.Println("anonymous:", resp.Status)
	req, _ := http.NewRequest("GET", srv.URL+"/inspect/machine?m=build.Task", nil)
	req.SetBasicAuth("ops", "secret")
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	fmt.Println("operator:", resp.Status)
	// Output:
	// anonymous: 401 Unauthorized
	// operator: 200 OK
}
