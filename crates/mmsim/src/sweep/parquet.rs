//! The sweep's table as Parquet: one Arrow record batch, a nullable column per table
//! column (Int64, Float64, Utf8 or Boolean), snappy-compressed pages.

use super::{Cell, Kind, Table};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::sync::Arc;

/// Write `table` to `out` as a Parquet file.
pub fn write(table: &Table, out: impl std::io::Write + Send) -> Result<(), String> {
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for c in &table.columns {
        let (ty, array): (DataType, ArrayRef) = match c.kind {
            Kind::Bool => (
                DataType::Boolean,
                Arc::new(BooleanArray::from(
                    c.cells
                        .iter()
                        .map(|v| match v {
                            Cell::Bool(b) => Some(*b),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                )),
            ),
            Kind::Int => (
                DataType::Int64,
                Arc::new(Int64Array::from(
                    c.cells
                        .iter()
                        .map(|v| match v {
                            Cell::Int(i) => Some(*i),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                )),
            ),
            Kind::Float => (
                DataType::Float64,
                Arc::new(Float64Array::from(
                    c.cells
                        .iter()
                        .map(|v| match v {
                            Cell::Float(f) => Some(*f),
                            Cell::Int(i) => Some(*i as f64),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                )),
            ),
            Kind::Str => (
                DataType::Utf8,
                Arc::new(StringArray::from(
                    c.cells
                        .iter()
                        .map(|v| match v {
                            Cell::Null => None,
                            other => Some(other.text()),
                        })
                        .collect::<Vec<_>>(),
                )),
            ),
        };
        fields.push(Field::new(&c.name, ty, true));
        arrays.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| e.to_string())?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut w = ArrowWriter::try_new(out, schema, Some(props)).map_err(|e| e.to_string())?;
    w.write(&batch).map_err(|e| e.to_string())?;
    w.close().map_err(|e| e.to_string())?;
    Ok(())
}
