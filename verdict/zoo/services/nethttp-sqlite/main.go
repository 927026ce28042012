// Command nethttp-sqlite is a payments service on plain net/http, its handlers closures in
// main, keeping its ledger in SQLite (modernc.org/sqlite) through database/sql with one
// connection, as SQLite writers usually are. Each payment holds its transaction open across
// a call to the payment provider (a slow downstream, 5 ms). Its one bottleneck is that one
// connection: every other request waits for it.
package main

import (
	"database/sql"
	"fmt"
	"io"
	"log"
	"net/http"
	_ "net/http/pprof"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	_ "modernc.org/sqlite"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	db, err := sql.Open("sqlite", svc.Env("SQLITE_PATH"))
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS ledger (id INTEGER PRIMARY KEY, account INTEGER, amount INTEGER, provider_ref TEXT)`); err != nil {
		log.Fatal(err)
	}
	provider := svc.Env("DOWNSTREAM_URL") + "/charge?delay=5ms"

	http.Handle("/metrics", promhttp.Handler())
	http.HandleFunc("/pay", func(w http.ResponseWriter, r *http.Request) {
		tx, err := db.BeginTx(r.Context(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer tx.Rollback()
		var balance int64
		if err := tx.QueryRow(`SELECT coalesce(sum(amount), 0) FROM ledger WHERE account = 7`).Scan(&balance); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, err := http.Get(provider)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		ref, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if _, err := tx.Exec(`INSERT INTO ledger (account, amount, provider_ref) VALUES (7, 100, ?)`, string(ref)); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if err := tx.Commit(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"balance":%d}`+"\n", balance+100)
	})
	log.Fatal(http.Serve(svc.Listen(), nil))
}
