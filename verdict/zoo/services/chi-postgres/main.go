// Command chi-postgres is an accounts service on chi, its handlers methods on a struct,
// reading PostgreSQL through database/sql (pgx's stdlib driver) with a pool of two
// connections. Each query spends 5 ms in the database (pg_sleep stands for a slow query
// without using this machine's CPU). Its one bottleneck is the pool's size.
package main

import (
	"database/sql"
	"encoding/json"
	"log"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type accounts struct {
	db *sql.DB
}

type account struct {
	ID      int    `json:"id"`
	Name    string `json:"name"`
	Balance int64  `json:"balance"`
}

func (a *accounts) migrate() error {
	_, err := a.db.Exec(`CREATE TABLE IF NOT EXISTS accounts (id int PRIMARY KEY, name text NOT NULL, balance bigint NOT NULL);
		INSERT INTO accounts SELECT g, 'account-' || g, g * 100 FROM generate_series(1, 100) g ON CONFLICT DO NOTHING`)
	return err
}

func (a *accounts) get(w http.ResponseWriter, r *http.Request) {
	var acc account
	err := a.db.QueryRowContext(r.Context(), `SELECT id, name, balance FROM accounts, pg_sleep(0.005) WHERE id = $1`,
		chi.URLParam(r, "id")).Scan(&acc.ID, &acc.Name, &acc.Balance)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(acc)
}

func main() {
	db, err := sql.Open("pgx", svc.Env("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	a := &accounts{db: db}
	if err := a.migrate(); err != nil {
		log.Fatal(err)
	}
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Mount("/debug", middleware.Profiler())
	r.Handle("/metrics", promhttp.Handler())
	r.Get("/accounts/{id}", a.get)
	log.Fatal(http.Serve(svc.Listen(), r))
}
