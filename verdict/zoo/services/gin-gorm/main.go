// Command gin-gorm is a product catalogue on gin, its handlers methods on a struct, reading
// MariaDB (or MySQL) through gorm and go-sql-driver/mysql with gorm's default pool. The
// lookup is by SKU, a column with no index, over 200,000 rows: every request makes the
// database scan the whole table. Its one bottleneck is that query (an index on sku is the
// fix), the database doing the work while the service waits for its answer.
package main

import (
	"log"
	"net/http"

	"github.com/gin-gonic/gin"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/apiperf/apiperf/verdict/zoo/internal/ginsvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type product struct {
	ID    int `gorm:"primaryKey"`
	SKU   string
	Name  string
	Price float64
}

type catalogue struct {
	db *gorm.DB
}

func (c *catalogue) migrate() error {
	if err := c.db.AutoMigrate(&product{}); err != nil {
		return err
	}
	var n int64
	if err := c.db.Model(&product{}).Count(&n).Error; err != nil || n >= 200000 {
		return err
	}
	return c.db.Exec(`INSERT IGNORE INTO products (id, sku, name, price)
		WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 200000)
		SELECT n, CONCAT('sku-', n), CONCAT('Product ', n), n / 100 FROM seq`).Error
}

// bySKU looks a product up by SKU (no index: a scan of the table each time).
func (c *catalogue) bySKU(ctx *gin.Context) {
	var p product
	if err := c.db.WithContext(ctx.Request.Context()).Where("sku = ?", ctx.Param("sku")).Take(&p).Error; err != nil {
		ctx.JSON(http.StatusNotFound, gin.H{"error": err.Error()})
		return
	}
	ctx.JSON(http.StatusOK, p)
}

func main() {
	db, err := gorm.Open(mysql.Open(svc.Env("MYSQL_DSN")), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		log.Fatal(err)
	}
	c := &catalogue{db: db}
	if err := c.migrate(); err != nil {
		log.Fatal(err)
	}
	r := ginsvc.New()
	r.GET("/products/:sku", c.bySKU)
	log.Fatal(http.Serve(svc.Listen(), r))
}
